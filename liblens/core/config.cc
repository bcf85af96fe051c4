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

#include "core/config_decode.h"
#include "core/redact.h"

namespace lens {
namespace config {

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

namespace {

// Every key of every section, as "section.key" (and top-level scalars).
std::vector<std::string> OverridableKeys(
    std::span<const SectionEntry> sections) {
  std::vector<std::string> out;
  for (const SectionEntry& section : sections) {
    if (section.keys == nullptr) {
      out.emplace_back(section.name);
      continue;
    }
    for (std::string_view key : section.keys()) {
      out.push_back(std::string(section.name) + "." + std::string(key));
    }
  }
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
Status ApplyOverrides(const ConfigLoadOptions& options,
                      std::span<const SectionEntry> sections, YAML::Node& root,
                      Ctx* ctx) {
  for (const std::string& path : OverridableKeys(sections)) {
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
StatusOr<std::string> ReadLimitedFile(const std::string& path,
                                      uint64_t max_bytes) {
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

// The top level: a map of sections; unknown and duplicate keys are errors.
Status DecodeTopLevel(const Ctx& ctx, const YAML::Node& node,
                      std::span<const SectionEntry> sections, void* root) {
  if (node.IsNull()) return OkStatus();
  if (!node.IsMap()) {
    return ctx.Error(node, "(top level)",
                     "expected a map, got " + std::string(KindName(node)));
  }
  std::set<std::string, std::less<>> seen;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) {
      return ctx.Error(key, "(top level)", "keys must be strings");
    }
    if (!seen.insert(key.Scalar()).second) {
      return ctx.Error(key, key.Scalar(), "duplicate key");
    }
    const SectionEntry* section = nullptr;
    for (const SectionEntry& s : sections) {
      if (s.name == key.Scalar()) section = &s;
    }
    if (section == nullptr) return ctx.Error(key, key.Scalar(), "unknown key");
    if (entry.second.IsNull()) continue;  // `key:` keeps the defaults.
    LENS_RETURN_IF_ERROR(
        section->decode(ctx, entry.second, key.Scalar(), root));
  }
  return OkStatus();
}

}  // namespace

Status ValidateSections(std::span<const SectionEntry> sections,
                        const void* root) {
  for (const SectionEntry& section : sections) {
    LENS_RETURN_IF_ERROR(
        section.validate(root).WithContext(std::string(section.name)));
  }
  return OkStatus();
}

Status ParseSections(std::string_view yaml, std::string_view source_name,
                     const ConfigLoadOptions& options,
                     std::span<const SectionEntry> sections, void* root) {
  Ctx ctx;
  ctx.source = std::string(source_name);
  if (yaml.size() > options.max_file_bytes) {
    return ResourceExhaustedError(
        ctx.source + ": config is larger than the limit of " +
        std::to_string(options.max_file_bytes) + " bytes");
  }
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(std::string(yaml));
    if (docs.size() > 1) {
      return InvalidArgumentError(ctx.source +
                                  ": expected one YAML document, found " +
                                  std::to_string(docs.size()));
    }
    YAML::Node node = docs.empty() ? YAML::Node() : docs.front();
    LENS_RETURN_IF_ERROR(ApplyOverrides(options, sections, node, &ctx));
    LENS_RETURN_IF_ERROR(DecodeTopLevel(ctx, node, sections, root));
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
  return NameOrigin(ValidateSections(sections, root), ctx);
}

StatusOr<std::string> ReadConfigFile(const std::string& path,
                                     uint64_t max_bytes) {
  return ReadLimitedFile(path, max_bytes);
}

// core's own sections.

namespace {

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
    {"compatNames", FieldFlag<MetricsOptions, &MetricsOptions::compat_names>},
    {"listenAddress",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        MetricsOptions* out) {
       LENS_ASSIGN_OR_RETURN(out->listen_address,
                             Scalar(ctx, v, path, "a string"));
       Status s = ValidateListenAddress(out->listen_address);
       return s.ok() ? s : ctx.Error(v, path, s.message());
     }},
};

}  // namespace

constinit const SectionSpec<LoggingOptions> kLoggingSection{"logging",
                                                            kLoggingRules};
constinit const SectionSpec<MetricsOptions> kMetricsSection{"metrics",
                                                            kMetricsRules};

}  // namespace config

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
  return config::ValidateListenAddress(listen_address)
      .WithContext("listenAddress");
}

}  // namespace lens
