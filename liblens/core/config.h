// Reading a configuration file: one YAML document, each top-level key a
// section that an area owns (core/config_section.h), decoded once into typed,
// validated structs. This file holds what is not any area's: core's own
// sections (`logging:`, `metrics:`), the command line's and the
// environment's overrides, and the reader. The product's whole file, every
// section and who owns it, is service/config.h.
//
// Precedence: built-in defaults < file < LENS_* environment variables <
// daemon flags (ConfigLoadOptions::overrides). Every key has a variable:
// "LENS_" plus its path in upper snake case: logging.level ->
// LENS_LOGGING_LEVEL, metrics.compatNames -> LENS_METRICS_COMPAT_NAMES,
// httpPort -> LENS_HTTP_PORT, jobs.listenGrpc -> LENS_JOBS_LISTEN_GRPC; one
// exception, database.url -> LENS_STORE_URL (as `lens db` reads it). Values
// from the environment are named in errors with passwords redacted.
//
// All functions here are thread-safe (they share no state); the structs are
// plain values.
#ifndef LENS_CORE_CONFIG_H_
#define LENS_CORE_CONFIG_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/config_section.h"
#include "lens/log.h"
#include "lens/status.h"

namespace lens {

// `logging:` section.
struct LoggingOptions {
  LogLevel level = LogLevel::kInfo;
  LogFormat format = LogFormat::kText;

  // Always OK today (both fields are enums checked while parsing); kept for
  // uniformity.
  Status Validate() const;
};

// `metrics:` section.
struct MetricsOptions {
  // `compatNames`: also export series under the original platform's metric
  // names (gpu_utilization, rdma_stat_*, ...) so existing dashboards keep
  // working.
  bool compat_names = false;
  // `listenAddress`: "host:port", ":port" (all interfaces) or "[v6addr]:port"
  // for a separate metrics listener; empty means /metrics is served on the main
  // HTTP port.
  std::string listen_address;

  // InvalidArgument if listen_address is not empty and not host:port with
  // port 1..65535.
  Status Validate() const;
};

namespace config {
extern const SectionSpec<LoggingOptions> kLoggingSection;  // `logging:`
extern const SectionSpec<MetricsOptions> kMetricsSection;  // `metrics:`
}  // namespace config

// One key's value from the command line: a daemon's flag names the key it
// sets, and the value goes through the same decoder and checks as the file's.
struct ConfigOverride {
  std::string path;    // "nodeExporter.listenAddress" (section.key or key)
  std::string value;   // as it would be written in the file: "0.0.0.0:8989"
  std::string origin;  // how errors name it: "--listen"
};

// Knobs of the loader (tests inject an environment; daemons use the defaults).
struct ConfigLoadOptions {
  // Files larger than this are rejected with ResourceExhausted before parsing.
  uint64_t max_file_bytes = uint64_t{1} << 20;  // 1 MiB
  // Looks up an environment variable; empty function: the process environment
  // (getenv).
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  // Applied after the LENS_* variables, in order (the command line wins).
  // Errors name them: "--interval=0.01: nodeExporter.interval: ...".
  std::vector<ConfigOverride> overrides;
};

namespace config {

// One section of a configuration, type-erased over the struct that holds
// every section (the composition's: service/config.h), so this reader needs
// to know no area. Made with SectionOf (a map section an area declares) or
// by hand (a top-level scalar such as httpPort).
struct SectionEntry {
  std::string_view name;  // the key in the file
  // The section's keys, each settable from the environment; null: the
  // section is a scalar key itself.
  std::vector<std::string_view> (*keys)() = nullptr;
  Status (*decode)(const Ctx& ctx, const YAML::Node& node,
                   const std::string& path, void* root) = nullptr;
  // The section's own Validate() (its message without the section's name).
  Status (*validate)(const void* root) = nullptr;
};

// `yaml` (one document; empty: the defaults) decoded into `root` by
// `sections`, with the LENS_* variables of every section's keys and then
// options.overrides applied over the file, and every section validated.
// Errors: ResourceExhausted (larger than options.max_file_bytes),
// InvalidArgument located at the file line or naming the variable or flag
// ("<source>:<line>:<column>: <path>: <problem>", "LENS_HTTP_PORT=x:
// httpPort: ..."). Unknown sections and keys are errors.
Status ParseSections(std::string_view yaml, std::string_view source_name,
                     const ConfigLoadOptions& options,
                     std::span<const SectionEntry> sections, void* root);

// Every section's Validate, the first error prefixed with its name
// ("metrics: listenAddress: ...").
Status ValidateSections(std::span<const SectionEntry> sections,
                        const void* root);

// The file at `path`, at most `max_bytes` (ResourceExhausted beyond; a file
// that lies about its size is caught too). NotFound and PermissionDenied
// name the path.
StatusOr<std::string> ReadConfigFile(const std::string& path,
                                     uint64_t max_bytes);

// The variable that sets `path` ("logging.level" -> LENS_LOGGING_LEVEL;
// database.url -> LENS_STORE_URL).
std::string EnvVarName(std::string_view path);

}  // namespace config
}  // namespace lens

#endif  // LENS_CORE_CONFIG_H_
