// The toolkit of every config section's decoder (an area's config.cc, and
// core's own): located errors, scalars, integers, booleans, durations, lists,
// the table-driven map decoder and the usual field decoders.
#ifndef LENS_CORE_CONFIG_DECODE_H_
#define LENS_CORE_CONFIG_DECODE_H_

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <chrono>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/config_section.h"
#include "lens/status.h"

namespace lens::config {

// Decoding context: the source name for locations and which paths the
// environment set.
struct Ctx {
  std::string source;
  std::map<std::string, std::string, std::less<>>
      env_origin;  // path -> "LENS_X=value" or "--flag=value"

  Status Error(const YAML::Node& node, std::string_view path,
               std::string_view problem) const {
    std::string where;
    if (auto it = env_origin.find(path);
        it != env_origin.end() && node.Mark().is_null()) {
      where = it->second;
    } else if (!node.Mark().is_null()) {
      where = source + ":" + std::to_string(node.Mark().line + 1) + ":" +
              std::to_string(node.Mark().column + 1);
    } else {
      where = source;
    }
    return InvalidArgumentError(where + ": " + std::string(path) + ": " +
                                std::string(problem));
  }
};

inline std::string_view KindName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "null";
    default:
      return "a scalar";
  }
}

// Returns the scalar text, or an error saying `expected` (e.g. "an integer")
// and what was found.
inline StatusOr<std::string> Scalar(const Ctx& ctx, const YAML::Node& node,
                                    std::string_view path,
                                    std::string_view expected) {
  if (!node.IsScalar()) {
    return ctx.Error(node, path,
                     "expected " + std::string(expected) + ", got " +
                         std::string(KindName(node)));
  }
  return node.Scalar();
}

inline StatusOr<int> DecodeInt(const Ctx& ctx, const YAML::Node& node,
                               std::string_view path, int min, int max) {
  LENS_ASSIGN_OR_RETURN(std::string text,
                        Scalar(ctx, node, path, "an integer"));
  int value = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range ||
      (ec == std::errc() && end == text.data() + text.size() &&
       (value < min || value > max))) {
    return ctx.Error(node, path,
                     "must be in " + std::to_string(min) + ".." +
                         std::to_string(max) + ", got " + text);
  }
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return ctx.Error(node, path, "expected an integer, got \"" + text + "\"");
  }
  return value;
}

inline StatusOr<bool> DecodeBool(const Ctx& ctx, const YAML::Node& node,
                                 std::string_view path) {
  StatusOr<std::string> scalar =
      Scalar(ctx, node, path, "a boolean (true/false)");
  if (!scalar.ok()) return scalar.status();
  const std::string& text = *scalar;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return ctx.Error(node, path,
                   "expected a boolean (true/false), got \"" + text + "\"");
}

// "5s", "500ms", "1m", "1h" -> milliseconds.
inline StatusOr<std::chrono::milliseconds> ParseDuration(
    std::string_view text) {
  int64_t value = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string_view unit(
      end, static_cast<size_t>(text.data() + text.size() - end));
  if (ec != std::errc() || value < 0) {
    return InvalidArgumentError(
        "expected a duration such as 5s or 500ms, got \"" + std::string(text) +
        "\"");
  }
  if (unit == "ms") return std::chrono::milliseconds(value);
  if (unit == "s") return std::chrono::milliseconds(value * 1000);
  if (unit == "m") return std::chrono::milliseconds(value * 60'000);
  if (unit == "h") return std::chrono::milliseconds(value * 3'600'000);
  return InvalidArgumentError(
      "expected a duration with a unit (ms, s, m, h), got \"" +
      std::string(text) + "\"");
}

// Converts a parser's error (e.g. ParseLogLevel's) into a located one.
template <typename T>
inline StatusOr<T> DecodeWith(const Ctx& ctx, const YAML::Node& node,
                              std::string_view path, std::string_view expected,
                              StatusOr<T> (*parse)(std::string_view)) {
  LENS_ASSIGN_OR_RETURN(std::string text, Scalar(ctx, node, path, expected));
  StatusOr<T> parsed = parse(text);
  if (!parsed.ok()) return ctx.Error(node, path, parsed.status().message());
  return parsed;
}

// The keys of a section's rules (each can be set from the environment).
template <typename S, size_t N>
std::vector<std::string_view> KeysOf(const FieldRule<S> (&rules)[N]) {
  std::vector<std::string_view> out;
  for (const FieldRule<S>& r : rules) out.push_back(r.key);
  return out;
}

template <typename S>
std::vector<std::string_view> KeysOf(std::span<const FieldRule<S>> rules) {
  std::vector<std::string_view> out;
  for (const FieldRule<S>& r : rules) out.push_back(r.key);
  return out;
}

// Decodes a map node with `rules`; unknown and duplicate keys are errors. Null
// keeps defaults.
template <typename S>
inline Status DecodeMap(const Ctx& ctx, const YAML::Node& node,
                        const std::string& path,
                        std::span<const FieldRule<S>> rules, S* out) {
  if (node.IsNull()) return OkStatus();
  if (!node.IsMap()) {
    return ctx.Error(node, path.empty() ? "(top level)" : path,
                     "expected a map, got " + std::string(KindName(node)));
  }
  std::set<std::string, std::less<>> seen;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) {
      return ctx.Error(key, path.empty() ? "(top level)" : path,
                       "keys must be strings");
    }
    const std::string child =
        path.empty() ? key.Scalar() : path + "." + key.Scalar();
    if (!seen.insert(key.Scalar()).second)
      return ctx.Error(key, child, "duplicate key");
    const FieldRule<S>* rule = nullptr;
    for (const FieldRule<S>& r : rules) {
      if (r.key == key.Scalar()) rule = &r;
    }
    if (rule == nullptr) return ctx.Error(key, child, "unknown key");
    if (entry.second.IsNull())
      continue;  // `key:` with no value keeps the default.
    LENS_RETURN_IF_ERROR(rule->decode(ctx, entry.second, child, out));
  }
  return OkStatus();
}

// A section as its area declares it: the map, then `spec.after`.
template <typename S>
inline Status DecodeSection(const Ctx& ctx, const YAML::Node& node,
                            const std::string& path, const SectionSpec<S>& spec,
                            S* out) {
  LENS_RETURN_IF_ERROR(DecodeMap<S>(ctx, node, path, spec.rules, out));
  return spec.after ? spec.after(ctx, node, path, out) : OkStatus();
}

// The composition's entry for section `spec`, held at `member` of Root
// (service/config.cc registers every section with it).
template <typename Root, typename S, S Root::*member,
          const SectionSpec<S>& spec>
SectionEntry SectionOf() {
  return SectionEntry{
      spec.name, [] { return KeysOf(spec.rules); },
      [](const Ctx& ctx, const YAML::Node& node, const std::string& path,
         void* root) {
        return DecodeSection(ctx, node, path, spec,
                             &(static_cast<Root*>(root)->*member));
      },
      [](const void* root) {
        return (static_cast<const Root*>(root)->*member).Validate();
      }};
}

// A YAML list of strings, or one comma-separated string (a flag's or a
// variable's value); items are trimmed and empty ones dropped, so "" is the
// empty list.
inline StatusOr<std::vector<std::string>> ListOf(const Ctx& ctx,
                                                 const YAML::Node& v,
                                                 const std::string& path) {
  std::vector<std::string> items;
  if (v.IsSequence()) {
    for (size_t i = 0; i < v.size(); ++i) {
      LENS_ASSIGN_OR_RETURN(
          std::string item,
          Scalar(ctx, v[i], path + "[" + std::to_string(i) + "]", "a string"));
      if (!item.empty()) items.push_back(std::move(item));
    }
  } else if (!v.IsNull()) {
    LENS_ASSIGN_OR_RETURN(std::string text,
                          Scalar(ctx, v, path, "a list or a string"));
    for (size_t at = 0; at <= text.size();) {
      size_t comma = text.find(',', at);
      if (comma == std::string::npos) comma = text.size();
      std::string item = text.substr(at, comma - at);
      while (!item.empty() && item.front() == ' ') item.erase(0, 1);
      while (!item.empty() && item.back() == ' ') item.pop_back();
      if (!item.empty()) items.push_back(std::move(item));
      at = comma + 1;
    }
  }
  return items;
}

// Decoders of one member of a section struct S, for FieldRule tables.
template <typename S, std::string S::*field>
Status FieldText(const Ctx& ctx, const YAML::Node& v, const std::string& path,
                 S* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, Scalar(ctx, v, path, "a string"));
  return OkStatus();
}

template <typename S, bool S::*field>
Status FieldFlag(const Ctx& ctx, const YAML::Node& v, const std::string& path,
                 S* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, DecodeBool(ctx, v, path));
  return OkStatus();
}

template <typename S, std::chrono::milliseconds S::*field>
Status FieldDuration(const Ctx& ctx, const YAML::Node& v,
                     const std::string& path, S* out) {
  LENS_ASSIGN_OR_RETURN(out->*field,
                        DecodeWith<std::chrono::milliseconds>(
                            ctx, v, path, "a duration", &ParseDuration));
  return OkStatus();
}

template <typename S, int S::*field, int kMin, int kMax>
Status FieldInt(const Ctx& ctx, const YAML::Node& v, const std::string& path,
                S* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, DecodeInt(ctx, v, path, kMin, kMax));
  return OkStatus();
}

template <typename S, std::vector<std::string> S::*field>
Status FieldList(const Ctx& ctx, const YAML::Node& v, const std::string& path,
                 S* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, ListOf(ctx, v, path));
  return OkStatus();
}

// A key of section S whose value lives in a struct the section holds at
// `sub` (a component's own options): decoded there by `decode`, one of the
// Field* decoders of that struct. The component's struct keeps its defaults
// and rules; the section does not copy its fields.
template <typename S, auto sub, auto decode>
Status Within(const Ctx& ctx, const YAML::Node& v, const std::string& path,
              S* out) {
  return decode(ctx, v, path, &(out->*sub));
}

// Decodes with `decode`, then checks the whole struct's Validate() for this
// key at the value (its message starting with "<key>: "), so the error
// points at the file line. Only for keys whose rules stand alone.
template <typename S, auto decode>
Status FieldChecked(const Ctx& ctx, const YAML::Node& v,
                    const std::string& path, S* out) {
  LENS_RETURN_IF_ERROR(decode(ctx, v, path, out));
  Status s = out->Validate();
  const std::string key = path.substr(path.rfind('.') + 1);
  if (s.ok() || s.message().rfind(key + ":", 0) != 0) return OkStatus();
  return ctx.Error(v, path, s.message().substr(key.size() + 2));
}

inline Status ValidatePort(int port) {
  if (port < 1 || port > 65535) {
    return InvalidArgumentError("must be in 1..65535, got " +
                                std::to_string(port));
  }
  return OkStatus();
}

// `allow_any_port`: port 0 (the kernel picks a free one) is accepted.
inline Status ValidateListenAddress(std::string_view address,
                                    bool allow_any_port = false) {
  if (address.empty()) return OkStatus();
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) {
    return InvalidArgumentError("\"" + std::string(address) +
                                "\" is not host:port");
  }
  const std::string_view host = address.substr(0, colon);
  const std::string_view port = address.substr(colon + 1);
  const bool bracketed =
      host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (!bracketed && host.find_first_of("[]:") != std::string_view::npos) {
    return InvalidArgumentError(
        "\"" + std::string(address) +
        "\": IPv6 hosts must be in brackets, e.g. [::1]:9400");
  }
  int value = 0;
  auto [end, ec] =
      std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() ||
      value < (allow_any_port ? 0 : 1) || value > 65535) {
    return InvalidArgumentError("\"" + std::string(address) +
                                "\": port must be in " +
                                (allow_any_port ? "0" : "1") + "..65535");
  }
  return OkStatus();
}

// A Kubernetes name (DNS-1123): lower-case alphanumerics and '-' (and, for a
// subdomain, '.'), starting and ending alphanumeric, at most `max` (63 for a
// label such as a namespace, 253 for a subdomain such as a Secret's name).
inline bool IsDnsName(std::string_view s, size_t max, bool dots) {
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  if (s.empty() || s.size() > max || !alnum(s.front()) || !alnum(s.back())) {
    return false;
  }
  for (char c : s) {
    if (!alnum(c) && c != '-' && !(dots && c == '.')) return false;
  }
  return true;
}

// A listen address, host:port; port 0 lets the kernel choose.
template <typename S, std::string S::*field>
Status FieldListen(const Ctx& ctx, const YAML::Node& v, const std::string& path,
                   S* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, Scalar(ctx, v, path, "a string"));
  Status s = ValidateListenAddress(out->*field, /*allow_any_port=*/true);
  return s.ok() ? s : ctx.Error(v, path, s.message());
}

// The source named when no file was given ("defaults: ...").
inline constexpr std::string_view kNoFile = "defaults";

// `validated`, a whole configuration's Validate() loaded with `ctx` (its
// messages "section: key: ..." or "key: ..."), naming where the value came
// from: "--flag=v:" or "LENS_X=v:" when an override set the key it is about
// (or, for a rule across keys, the key it names first), else the file
// (config_origin.cc).
Status NameOrigin(Status validated, const Ctx& ctx);

}  // namespace lens::config

#endif  // LENS_CORE_CONFIG_DECODE_H_
