#include "lens/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <map>
#include <set>
#include <span>
#include <vector>

namespace lens {
namespace {

// Keys a LENS_* variable may override (paths as written in the file). Data, not
// code: a new section appends its scalar keys here.
constexpr std::string_view kEnvOverridable[] = {
    "logging.level",         "logging.format", "metrics.compatNames",
    "metrics.listenAddress", "httpPort",
};

// logging.level -> LENS_LOGGING_LEVEL, metrics.compatNames ->
// LENS_METRICS_COMPAT_NAMES.
std::string EnvVarName(std::string_view path) {
  std::string out = "LENS_";
  for (char c : path) {
    if (c == '.') {
      out.push_back('_');
    } else if (std::isupper(static_cast<unsigned char>(c))) {
      out.push_back('_');
      out.push_back(c);
    } else {
      out.push_back(
          static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

// Decoding context: the source name for locations and which paths the
// environment set.
struct Ctx {
  std::string source;
  std::map<std::string, std::string, std::less<>>
      env_origin;  // path -> "LENS_X=value"

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

std::string_view KindName(const YAML::Node& node) {
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
StatusOr<std::string> Scalar(const Ctx& ctx, const YAML::Node& node,
                             std::string_view path, std::string_view expected) {
  if (!node.IsScalar()) {
    return ctx.Error(node, path,
                     "expected " + std::string(expected) + ", got " +
                         std::string(KindName(node)));
  }
  return node.Scalar();
}

StatusOr<int> DecodeInt(const Ctx& ctx, const YAML::Node& node,
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

StatusOr<bool> DecodeBool(const Ctx& ctx, const YAML::Node& node,
                          std::string_view path) {
  LENS_ASSIGN_OR_RETURN(std::string text,
                        Scalar(ctx, node, path, "a boolean (true/false)"));
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return ctx.Error(node, path,
                   "expected a boolean (true/false), got \"" + text + "\"");
}

// Converts a parser's error (e.g. ParseLogLevel's) into a located one.
template <typename T>
StatusOr<T> DecodeWith(const Ctx& ctx, const YAML::Node& node,
                       std::string_view path, std::string_view expected,
                       StatusOr<T> (*parse)(std::string_view)) {
  LENS_ASSIGN_OR_RETURN(std::string text, Scalar(ctx, node, path, expected));
  StatusOr<T> parsed = parse(text);
  if (!parsed.ok()) return ctx.Error(node, path, parsed.status().message());
  return parsed;
}

// One key of a map-valued section: how to decode its value into the section
// struct S.
template <typename S>
struct FieldRule {
  std::string_view key;
  Status (*decode)(const Ctx& ctx, const YAML::Node& value,
                   const std::string& path, S* out);
};

// Decodes a map node with `rules`; unknown and duplicate keys are errors. Null
// keeps defaults.
template <typename S>
Status DecodeMap(const Ctx& ctx, const YAML::Node& node,
                 const std::string& path, std::span<const FieldRule<S>> rules,
                 S* out) {
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

Status ValidatePort(int port) {
  if (port < 1 || port > 65535) {
    return InvalidArgumentError("must be in 1..65535, got " +
                                std::to_string(port));
  }
  return OkStatus();
}

Status ValidateListenAddress(std::string_view address) {
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
      value < 1 || value > 65535) {
    return InvalidArgumentError("\"" + std::string(address) +
                                "\": port must be in 1..65535");
  }
  return OkStatus();
}

constexpr FieldRule<LoggingOptions> kLoggingRules[] = {
    {"level",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        LoggingOptions* out) {
       LENS_ASSIGN_OR_RETURN(
           out->level,
           DecodeWith<LogLevel>(ctx, v, path, "a log level", ParseLogLevel));
       return OkStatus();
     }},
    {"format",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        LoggingOptions* out) {
       LENS_ASSIGN_OR_RETURN(
           out->format,
           DecodeWith<LogFormat>(ctx, v, path, "a log format", ParseLogFormat));
       return OkStatus();
     }},
};

constexpr FieldRule<MetricsOptions> kMetricsRules[] = {
    {"compatNames",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        MetricsOptions* out) {
       LENS_ASSIGN_OR_RETURN(out->compat_names, DecodeBool(ctx, v, path));
       return OkStatus();
     }},
    {"listenAddress",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        MetricsOptions* out) {
       LENS_ASSIGN_OR_RETURN(out->listen_address,
                             Scalar(ctx, v, path, "a string"));
       Status s = ValidateListenAddress(out->listen_address);
       return s.ok() ? s : ctx.Error(v, path, s.message());
     }},
};

// Top level: one rule per section (a new component adds its section here).
constexpr FieldRule<Config> kTopLevelRules[] = {
    {"logging",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        Config* out) {
       return DecodeMap<LoggingOptions>(ctx, v, path, kLoggingRules,
                                        &out->logging);
     }},
    {"metrics",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        Config* out) {
       return DecodeMap<MetricsOptions>(ctx, v, path, kMetricsRules,
                                        &out->metrics);
     }},
    {"httpPort",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        Config* out) {
       LENS_ASSIGN_OR_RETURN(out->http_port, DecodeInt(ctx, v, path, 1, 65535));
       return OkStatus();
     }},
};

std::optional<std::string> ProcessGetenv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// Writes LENS_* overrides into the parsed tree so they get the same type checks
// as the file. An empty variable counts as unset (Kubernetes sets optional ones
// to "").
Status ApplyEnvOverrides(const ConfigLoadOptions& options, YAML::Node& root,
                         Ctx* ctx) {
  for (std::string_view path : kEnvOverridable) {
    const std::string name = EnvVarName(path);
    std::optional<std::string> value =
        options.getenv ? options.getenv(name) : ProcessGetenv(name);
    if (!value.has_value() || value->empty()) continue;
    if (!root.IsNull() && !root.IsMap())
      return OkStatus();  // DecodeMap reports it.
    // Replace (not assign into) the file's node, so the value has no file Mark
    // and errors point at the variable.
    const size_t dot = path.find('.');
    if (dot == std::string_view::npos) {
      root.remove(std::string(path));
      root[std::string(path)] = YAML::Node(*value);
    } else {
      const std::string section_key(path.substr(0, dot));
      const std::string key(path.substr(dot + 1));
      YAML::Node section = root[section_key];
      if (!section.IsDefined() || section.IsNull()) {
        section = YAML::Node(YAML::NodeType::Map);
        root[section_key] = section;
      } else if (!section.IsMap()) {
        continue;  // DecodeMap reports the section's type.
      }
      section.remove(key);
      section[key] = YAML::Node(*value);
    }
    ctx->env_origin[std::string(path)] = name + "=" + *value;
  }
  return OkStatus();
}

// Reads at most max_bytes + 1 bytes, so a file that lies about its size
// (procfs, a growing file) is still caught by the limit.
StatusOr<std::string> ReadLimited(const std::string& path, uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open config file " + path);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    ::close(fd);
    return InvalidArgumentError("config file " + path +
                                " is not a regular file");
  }
  std::string data;
  char buf[16384];
  while (data.size() <= max_bytes) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return ErrnoError(err, "read config file " + path);
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (data.size() > max_bytes) {
    return ResourceExhaustedError("config file " + path +
                                  " is larger than the limit of " +
                                  std::to_string(max_bytes) + " bytes");
  }
  return data;
}

}  // namespace

Status LoggingOptions::Validate() const {
  if (static_cast<int>(level) < 0 || static_cast<int>(level) > 3) {
    return InvalidArgumentError("level: not a valid log level");
  }
  if (format != LogFormat::kText && format != LogFormat::kJson) {
    return InvalidArgumentError("format: not a valid log format");
  }
  return OkStatus();
}

Status MetricsOptions::Validate() const {
  return ValidateListenAddress(listen_address).WithContext("listenAddress");
}

Status Config::Validate() const {
  LENS_RETURN_IF_ERROR(logging.Validate().WithContext("logging"));
  LENS_RETURN_IF_ERROR(metrics.Validate().WithContext("metrics"));
  if (http_port.has_value())
    LENS_RETURN_IF_ERROR(ValidatePort(*http_port).WithContext("httpPort"));
  return OkStatus();
}

StatusOr<Config> ParseConfig(std::string_view yaml,
                             std::string_view source_name,
                             const ConfigLoadOptions& options) {
  Ctx ctx;
  ctx.source = std::string(source_name);
  if (yaml.size() > options.max_file_bytes) {
    return ResourceExhaustedError(
        ctx.source + ": config is larger than the limit of " +
        std::to_string(options.max_file_bytes) + " bytes");
  }
  Config config;
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(std::string(yaml));
    if (docs.size() > 1) {
      return InvalidArgumentError(ctx.source +
                                  ": expected one YAML document, found " +
                                  std::to_string(docs.size()));
    }
    YAML::Node root = docs.empty() ? YAML::Node() : docs.front();
    LENS_RETURN_IF_ERROR(ApplyEnvOverrides(options, root, &ctx));
    LENS_RETURN_IF_ERROR(
        DecodeMap<Config>(ctx, root, "", kTopLevelRules, &config));
  } catch (const YAML::Exception& e) {
    // e.msg is the bare problem; e.mark its position (0-based; null for
    // non-parse errors).
    std::string where = ctx.source;
    if (!e.mark.is_null()) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" +
               std::to_string(e.mark.column + 1);
    }
    return InvalidArgumentError(where + ": invalid YAML: " + e.msg);
  } catch (const std::exception& e) {
    return InternalError(ctx.source + ": loading config: " + e.what());
  }
  LENS_RETURN_IF_ERROR(config.Validate().WithContext(ctx.source));
  return config;
}

StatusOr<Config> LoadConfigFile(const std::string& path,
                                const ConfigLoadOptions& options) {
  LENS_ASSIGN_OR_RETURN(std::string text,
                        ReadLimited(path, options.max_file_bytes));
  return ParseConfig(text, path, options);
}

}  // namespace lens
