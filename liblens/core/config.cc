#include "core/config.h"

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

#include "core/config_api.h"
#include "core/config_decode.h"
#include "core/config_jobs.h"
#include "core/config_multicluster.h"
#include "core/config_netflow.h"
#include "core/config_node_exporter.h"
#include "core/config_telemetry.h"
#include "core/config_tuner.h"
#include "core/redact.h"

namespace lens {
namespace {

// "logging.level" -> "LENS_LOGGING_LEVEL", "metrics.compatNames" ->
// "LENS_METRICS_COMPAT_NAMES"; database.url is LENS_STORE_URL, the name
// `lens db` and the store have always read.
std::string EnvVarName(std::string_view path) {
  if (path == "database.url") return "LENS_STORE_URL";
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

using namespace config;  // NOLINT: the decoding helpers

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
    {"nodeExporter",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        Config* out) {
       return DecodeNodeExporter(ctx, v, path, &out->node_exporter);
     }},
    {"netflow",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        Config* out) { return DecodeNetflow(ctx, v, path, &out->netflow); }},
    {"jobs", [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
                Config* out) { return DecodeJobs(ctx, v, path, &out->jobs); }},
    {"controller",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        Config* out) {
       return DecodeController(ctx, v, path, &out->controller);
     }},
    {"telemetry",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        Config* out) {
       return DecodeTelemetry(ctx, v, path, &out->telemetry);
     }},
    {"api", [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
               Config* out) { return DecodeApi(ctx, v, path, &out->api); }},
    {"database",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        Config* out) { return DecodeDatabase(ctx, v, path, &out->database); }},
    {"tuner",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        Config* out) { return DecodeTuner(ctx, v, path, &out->tuner); }},
    {"multiCluster",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        Config* out) {
       return DecodeMultiCluster(ctx, v, path, &out->multi_cluster);
     }},
    {"httpPort",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        Config* out) {
       LENS_ASSIGN_OR_RETURN(out->http_port, DecodeInt(ctx, v, path, 1, 65535));
       return OkStatus();
     }},
};

// Every key of every section, as "section.key" (and top-level scalars).
std::vector<std::string> EnvOverridableKeys() {
  std::vector<std::string> out;
  auto add = [&out](std::string_view section,
                    const std::vector<std::string_view>& keys) {
    for (std::string_view k : keys)
      out.push_back(std::string(section) + "." + std::string(k));
  };
  add("logging", KeysOf(kLoggingRules));
  add("metrics", KeysOf(kMetricsRules));
  add("nodeExporter", NodeExporterKeys());
  add("netflow", NetflowKeys());
  add("jobs", JobsKeys());
  add("controller", ControllerKeys());
  add("telemetry", TelemetryKeys());
  add("api", ApiKeys());
  add("database", DatabaseKeys());
  add("tuner", TunerKeys());
  add("multiCluster", MultiClusterKeys());
  out.push_back("httpPort");
  return out;
}

std::optional<std::string> ProcessGetenv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// Puts `value` at `path` ("section.key" or "key") in the parsed tree, so it
// gets the same type checks as the file. The file's node is replaced, not
// assigned into, so the value has no file Mark and errors name `origin`.
void SetOverride(YAML::Node& root, std::string_view path,
                 const std::string& value, const std::string& origin,
                 Ctx* ctx) {
  if (!root.IsNull() && !root.IsMap()) return;  // DecodeMap reports it.
  const size_t dot = path.find('.');
  if (dot == std::string_view::npos) {
    root.remove(std::string(path));
    root[std::string(path)] = YAML::Node(value);
  } else {
    const std::string section_key(path.substr(0, dot));
    const std::string key(path.substr(dot + 1));
    YAML::Node section = root[section_key];
    if (!section.IsDefined() || section.IsNull()) {
      section = YAML::Node(YAML::NodeType::Map);
      root[section_key] = section;
    } else if (!section.IsMap()) {
      return;  // DecodeMap reports the section's type.
    }
    section.remove(key);
    section[key] = YAML::Node(value);
  }
  ctx->env_origin[std::string(path)] = origin;
}

// LENS_* variables, then the command line's overrides. An empty variable
// counts as unset (Kubernetes sets optional ones to "").
Status ApplyOverrides(const ConfigLoadOptions& options, YAML::Node& root,
                      Ctx* ctx) {
  for (const std::string& path : EnvOverridableKeys()) {
    const std::string name = EnvVarName(path);
    std::optional<std::string> value =
        options.getenv ? options.getenv(name) : ProcessGetenv(name);
    if (!value.has_value() || value->empty()) continue;
    SetOverride(root, path, *value, name + "=" + RedactCredentials(*value),
                ctx);
  }
  for (const ConfigOverride& o : options.overrides) {
    if (o.path.empty() || o.path.find('.') != o.path.rfind('.')) {
      return InvalidArgumentError(o.origin + ": config key \"" + o.path +
                                  "\" is not section.key or key");
    }
    SetOverride(root, o.path, o.value,
                o.origin + "=" + RedactCredentials(o.value), ctx);
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
  LENS_RETURN_IF_ERROR(node_exporter.Validate().WithContext("nodeExporter"));
  LENS_RETURN_IF_ERROR(netflow.Validate().WithContext("netflow"));
  LENS_RETURN_IF_ERROR(jobs.Validate().WithContext("jobs"));
  LENS_RETURN_IF_ERROR(controller.Validate().WithContext("controller"));
  LENS_RETURN_IF_ERROR(telemetry.Validate().WithContext("telemetry"));
  LENS_RETURN_IF_ERROR(api.Validate().WithContext("api"));
  LENS_RETURN_IF_ERROR(database.Validate().WithContext("database"));
  LENS_RETURN_IF_ERROR(tuner.Validate().WithContext("tuner"));
  LENS_RETURN_IF_ERROR(multi_cluster.Validate().WithContext("multiCluster"));
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
    LENS_RETURN_IF_ERROR(ApplyOverrides(options, root, &ctx));
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
  LENS_RETURN_IF_ERROR(ValidateNamingOrigin(config, ctx));
  return config;
}

StatusOr<Config> LoadConfigFile(const std::string& path,
                                const ConfigLoadOptions& options) {
  LENS_ASSIGN_OR_RETURN(std::string text,
                        ReadLimited(path, options.max_file_bytes));
  return ParseConfig(text, path, options);
}

StatusOr<Config> LoadConfig(const std::string& path,
                            const ConfigLoadOptions& options) {
  if (path.empty()) return ParseConfig("", config::kNoFile, options);
  return LoadConfigFile(path, options);
}

}  // namespace lens
