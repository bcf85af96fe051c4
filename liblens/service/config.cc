// The configuration file's sections, registered under their names: the one
// table that says which area owns which key of the file.
#include "service/config.h"

#include <span>
#include <vector>

#include "core/config_decode.h"

namespace lens {
namespace {

using config::SectionEntry;
using config::SectionOf;

// `httpPort`: a scalar at the top level, not a section of an area.
SectionEntry HttpPortEntry() {
  return SectionEntry{"httpPort", nullptr,
                      [](const config::Ctx& ctx, const YAML::Node& v,
                         const std::string& path, void* root) {
                        LENS_ASSIGN_OR_RETURN(
                            static_cast<Config*>(root)->http_port,
                            config::DecodeInt(ctx, v, path, 1, 65535));
                        return OkStatus();
                      },
                      [](const void* root) {
                        const std::optional<int>& port =
                            static_cast<const Config*>(root)->http_port;
                        return port ? config::ValidatePort(*port) : OkStatus();
                      }};
}

std::span<const SectionEntry> Sections() {
  static const std::vector<SectionEntry> kSections = {
      SectionOf<Config, LoggingOptions, &Config::logging,
                config::kLoggingSection>(),
      SectionOf<Config, MetricsOptions, &Config::metrics,
                config::kMetricsSection>(),
      SectionOf<Config, NodeExporterOptions, &Config::node_exporter,
                config::kNodeExporterSection>(),
      SectionOf<Config, NetflowOptions, &Config::netflow,
                config::kNetflowSection>(),
      SectionOf<Config, JobsOptions, &Config::jobs, config::kJobsSection>(),
      SectionOf<Config, ControllerConfigOptions, &Config::controller,
                config::kControllerSection>(),
      SectionOf<Config, TelemetryConfigOptions, &Config::telemetry,
                config::kTelemetrySection>(),
      SectionOf<Config, ApiConfigOptions, &Config::api, config::kApiSection>(),
      SectionOf<Config, DatabaseOptions, &Config::database,
                config::kDatabaseSection>(),
      SectionOf<Config, TunerOptions, &Config::tuner, config::kTunerSection>(),
      SectionOf<Config, MultiClusterOptions, &Config::multi_cluster,
                config::kMultiClusterSection>(),
      HttpPortEntry(),
  };
  return kSections;
}

}  // namespace

Status Config::Validate() const {
  return config::ValidateSections(Sections(), this);
}

StatusOr<Config> ParseConfig(std::string_view yaml,
                             std::string_view source_name,
                             const ConfigLoadOptions& options) {
  Config config;
  LENS_RETURN_IF_ERROR(
      config::ParseSections(yaml, source_name, options, Sections(), &config));
  return config;
}

StatusOr<Config> LoadConfigFile(const std::string& path,
                                const ConfigLoadOptions& options) {
  LENS_ASSIGN_OR_RETURN(std::string text,
                        config::ReadConfigFile(path, options.max_file_bytes));
  return ParseConfig(text, path, options);
}

StatusOr<Config> LoadConfig(const std::string& path,
                            const ConfigLoadOptions& options) {
  if (path.empty()) return ParseConfig("", config::kNoFile, options);
  return LoadConfigFile(path, options);
}

}  // namespace lens
