// The `tuner:` section (lens-tuner): decoding, with every error located at
// the file line of the key or entry it is about (the rules themselves are in
// sysctl_rules.cc).
#include "tuner/config.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/config_decode.h"
#include "tuner/sysctl_rules.h"

namespace lens {
namespace config {
namespace {

using Tu = TunerOptions;

// `sysctls:` as a map (a value may be a list of integers) or, from a flag,
// "key=value,key=value".
Status DecodeSysctls(const Ctx& ctx, const YAML::Node& v,
                     const std::string& path, Tu* out) {
  out->sysctls.clear();
  auto add = [&](const YAML::Node& at, std::string key,
                 std::string value) -> Status {
    StatusOr<std::string> canonical = CanonicalSysctl(key, value);
    if (!canonical.ok())
      return ctx.Error(at, path, canonical.status().message());
    if (!out->sysctls.emplace(std::move(key), *canonical).second)
      return ctx.Error(at, path, "duplicate key");
    return OkStatus();
  };
  if (v.IsScalar()) {
    for (std::string_view item : SplitCommaItems(v.Scalar())) {
      const size_t eq = item.find('=');
      if (eq == std::string_view::npos) {
        return ctx.Error(
            v, path, "expected key=value, got \"" + std::string(item) + "\"");
      }
      LENS_RETURN_IF_ERROR(add(v, std::string(TrimBlanks(item.substr(0, eq))),
                               std::string(TrimBlanks(item.substr(eq + 1)))));
    }
    return OkStatus();
  }
  if (!v.IsMap()) {
    return ctx.Error(v, path,
                     "expected a map, got " + std::string(KindName(v)));
  }
  for (const auto& entry : v) {
    LENS_ASSIGN_OR_RETURN(std::string key,
                          Scalar(ctx, entry.first, path, "a sysctl key"));
    std::string value;
    if (entry.second.IsSequence()) {
      for (const YAML::Node& n : entry.second) {
        LENS_ASSIGN_OR_RETURN(std::string word,
                              Scalar(ctx, n, path + "." + key, "an integer"));
        value += (value.empty() ? "" : " ") + word;
      }
    } else {
      LENS_ASSIGN_OR_RETURN(
          value, Scalar(ctx, entry.second, path + "." + key, "a value"));
    }
    // An unknown key is pointed at; a bad value at the value.
    const bool known = IsKnownSysctl(key);
    LENS_RETURN_IF_ERROR(
        add(known ? entry.second : entry.first, key, std::move(value)));
  }
  return OkStatus();
}

constexpr FieldRule<TunerLimit> kLimitRules[] = {
    {"domain", FieldText<TunerLimit, &TunerLimit::domain>},
    {"type",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        TunerLimit* out) {
       LENS_ASSIGN_OR_RETURN(
           out->type, DecodeWith<TunerLimit::Type>(ctx, v, path, "a limit type",
                                                   &ParseTunerLimitType));
       return OkStatus();
     }},
    {"item", FieldText<TunerLimit, &TunerLimit::item>},
    {"value", FieldText<TunerLimit, &TunerLimit::value>},
};

// One item of the flag form: "nofile=131072" or "@gpu hard memlock unlimited".
StatusOr<TunerLimit> ParseLimitItem(std::string_view item) {
  TunerLimit limit;
  if (const size_t eq = item.find('='); eq != std::string_view::npos) {
    limit.item = std::string(TrimBlanks(item.substr(0, eq)));
    limit.value = std::string(TrimBlanks(item.substr(eq + 1)));
    return limit;
  }
  const std::vector<std::string_view> words = SplitBlanks(item);
  if (words.size() != 4) {
    return InvalidArgumentError(
        "expected \"item=value\" or \"domain type item value\", got \"" +
        std::string(item) + "\"");
  }
  limit.domain = std::string(words[0]);
  LENS_ASSIGN_OR_RETURN(limit.type, ParseTunerLimitType(words[1]));
  limit.item = std::string(words[2]);
  limit.value = std::string(words[3]);
  return limit;
}

// `limits:` as a list of maps or, from a flag, comma-separated items.
Status DecodeLimits(const Ctx& ctx, const YAML::Node& v,
                    const std::string& path, Tu* out) {
  out->limits.clear();
  if (v.IsScalar()) {
    for (std::string_view item : SplitCommaItems(v.Scalar())) {
      StatusOr<TunerLimit> limit = ParseLimitItem(item);
      if (!limit.ok()) return ctx.Error(v, path, limit.status().message());
      out->limits.push_back(std::move(*limit));
    }
  } else if (v.IsSequence()) {
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      TunerLimit limit;
      LENS_RETURN_IF_ERROR(
          DecodeMap<TunerLimit>(ctx, v[i], at, kLimitRules, &limit));
      if (limit.item.empty()) return ctx.Error(v[i], at, "item: missing");
      if (limit.value.empty()) return ctx.Error(v[i], at, "value: missing");
      out->limits.push_back(std::move(limit));
    }
  } else {
    return ctx.Error(v, path,
                     "expected a list, got " + std::string(KindName(v)));
  }
  // Each entry on its own here, located at its own line; nofile's bound
  // and the checks across entries wait for the whole section (fs.nr_open
  // may come after).
  for (size_t i = 0; i < out->limits.size(); ++i) {
    TunerLimit& limit = out->limits[i];
    Status s = CheckTunerLimit(&limit, std::numeric_limits<int64_t>::max());
    if (s.ok()) continue;
    const YAML::Node at = v.IsSequence() ? v[i]["value"] : v;
    return ctx.Error(
        at.IsDefined() ? at : v[i],
        path + (v.IsSequence() ? "[" + std::to_string(i) + "]" : ""),
        s.message());
  }
  return OkStatus();
}

constexpr FieldRule<Tu> kTunerRules[] = {
    {"listenAddress", FieldChecked<Tu, FieldText<Tu, &Tu::listen_address>>},
    {"interval", FieldChecked<Tu, FieldDuration<Tu, &Tu::interval>>},
    {"procRoot", FieldChecked<Tu, FieldText<Tu, &Tu::proc_root>>},
    {"etcRoot", FieldChecked<Tu, FieldText<Tu, &Tu::etc_root>>},
    {"persist", FieldFlag<Tu, &Tu::persist>},
    {"sysctls", DecodeSysctls},
    {"limits", DecodeLimits},
    {"bearerTokenFile", FieldText<Tu, &Tu::bearer_token_file>},
    {"tlsCertFile", FieldText<Tu, &Tu::tls_cert_file>},
    {"tlsKeyFile", FieldText<Tu, &Tu::tls_key_file>},
};

// What needs the whole section (nofile against fs.nr_open, limits set
// twice), located at the key it is about.
Status AfterTuner(const Ctx& ctx, const YAML::Node& node,
                  const std::string& path, TunerOptions* out) {
  Status s = out->Validate();
  if (s.ok() || !node.IsMap()) return s;
  for (std::string_view key : {"sysctls", "limits"}) {
    const std::string prefix = std::string(key) + ": ";
    if (s.message().rfind(prefix, 0) == 0 && node[std::string(key)]) {
      return ctx.Error(node[std::string(key)], path + "." + std::string(key),
                       s.message().substr(prefix.size()));
    }
  }
  return OkStatus();  // the other keys were checked where they were decoded
}

}  // namespace

constinit const SectionSpec<TunerOptions> kTunerSection{"tuner", kTunerRules,
                                                        AfterTuner};

}  // namespace config
}  // namespace lens
