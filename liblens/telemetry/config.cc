// The `telemetry:` section (lens-telemetry): its keys, decoders and rules.
#include "telemetry/config.h"

#include <charconv>

#include "core/config_decode.h"

namespace lens {
namespace config {
namespace {

using T = TelemetryConfigOptions;

// "1048576", "32MiB", "1GiB", "512KiB", "10MB" (powers of 1000 for the SI
// units).
StatusOr<uint64_t> ParseBytes(std::string_view text) {
  uint64_t value = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string_view unit(
      end, static_cast<size_t>(text.data() + text.size() - end));
  const std::string bad =
      "expected a size such as 1048576, 32MiB or 1GiB, "
      "got \"" +
      std::string(text) + "\"";
  if (ec != std::errc() || text.empty()) return InvalidArgumentError(bad);
  struct Unit {
    std::string_view name;
    uint64_t factor;
  };
  static constexpr Unit kUnits[] = {{"", 1},
                                    {"B", 1},
                                    {"KiB", 1 << 10},
                                    {"MiB", 1 << 20},
                                    {"GiB", 1 << 30},
                                    {"TiB", uint64_t{1} << 40},
                                    {"KB", 1000},
                                    {"MB", 1000'000},
                                    {"GB", 1000'000'000},
                                    {"TB", 1000'000'000'000}};
  for (const Unit& u : kUnits) {
    if (unit != u.name) continue;
    if (value > UINT64_MAX / u.factor) return InvalidArgumentError(bad);
    return value * u.factor;
  }
  return InvalidArgumentError(bad);
}

template <uint64_t T::*field>
Status DecodeSize(const Ctx& ctx, const YAML::Node& v, const std::string& path,
                  T* out) {
  LENS_ASSIGN_OR_RETURN(
      out->*field, DecodeWith<uint64_t>(ctx, v, path, "a size", &ParseBytes));
  return OkStatus();
}

// The same for a key of the series labels.
template <std::vector<std::string> SeriesIdentityLabels::*field>
Status DecodeSeriesList(const Ctx& ctx, const YAML::Node& v,
                        const std::string& path, T* out) {
  LENS_ASSIGN_OR_RETURN(out->series.*field, ListOf(ctx, v, path));
  return OkStatus();
}

constexpr FieldRule<T> kTelemetryRules[] = {
    {"listen", FieldChecked<T, FieldText<T, &T::listen>>},
    {"bearerTokenFile", FieldText<T, &T::bearer_token_file>},
    {"tlsCertFile", FieldText<T, &T::tls_cert_file>},
    {"tlsKeyFile", FieldText<T, &T::tls_key_file>},
    {"maxRequestBytes", FieldChecked<T, DecodeSize<&T::max_request_bytes>>},
    {"forward", FieldChecked<T, FieldList<T, &T::forward>>},
    {"forwardTokenFile", FieldText<T, &T::forward_token_file>},
    {"forwardCaFile", FieldText<T, &T::forward_ca_file>},
    {"forwardInsecureSkipTlsVerify",
     FieldFlag<T, &T::forward_insecure_skip_tls_verify>},
    {"forwardTimeout", FieldChecked<T, FieldDuration<T, &T::forward_timeout>>},
    {"queueDir", FieldText<T, &T::queue_dir>},
    {"queueMaxBytes", FieldChecked<T, DecodeSize<&T::queue_max_bytes>>},
    {"queueFsync", FieldFlag<T, &T::queue_fsync>},
    {"metricPrefixes",
     DecodeSeriesList<&SeriesIdentityLabels::metric_prefixes>},
    {"namespaceLabels",
     FieldChecked<T,
                  DecodeSeriesList<&SeriesIdentityLabels::namespace_labels>>},
    {"podLabels",
     FieldChecked<T, DecodeSeriesList<&SeriesIdentityLabels::pod_labels>>},
    {"nodeLabels",
     FieldChecked<T, DecodeSeriesList<&SeriesIdentityLabels::node_labels>>},
    {"gpuIndexLabels",
     DecodeSeriesList<&SeriesIdentityLabels::gpu_index_labels>},
    {"gpuSerialLabels",
     DecodeSeriesList<&SeriesIdentityLabels::gpu_serial_labels>},
    {"gpuBdfLabels", DecodeSeriesList<&SeriesIdentityLabels::gpu_bdf_labels>},
    {"gpuUuidLabels", DecodeSeriesList<&SeriesIdentityLabels::gpu_uuid_labels>},
    {"rdmaDeviceLabels",
     DecodeSeriesList<&SeriesIdentityLabels::rdma_device_labels>},
    {"compatNames", FieldFlag<T, &T::compat_names>},
    {"ownershipRefresh",
     FieldChecked<T, FieldDuration<T, &T::ownership_refresh>>},
    {"ownershipHistory", FieldDuration<T, &T::ownership_history>},
    {"sampleHistory", FieldFlag<T, &T::sample_history>},
    {"sampleResolution",
     FieldChecked<T, FieldDuration<T, &T::sample_resolution>>},
    {"sampleRetention", FieldDuration<T, &T::sample_retention>},
    {"sampleMaxSeries", FieldInt<T, &T::sample_max_series, 1, 100'000'000>},
    {"logs", FieldFlag<T, &T::logs>},
    {"selfPodPrefixes", FieldList<T, &T::self_pod_prefixes>},
};

}  // namespace

constinit const SectionSpec<TelemetryConfigOptions> kTelemetrySection{
    "telemetry", kTelemetryRules};

}  // namespace config

Status TelemetryConfigOptions::Validate() const {
  LENS_RETURN_IF_ERROR(
      config::ValidateListenAddress(listen, true).WithContext("listen"));
  if (max_request_bytes < 1024 || max_request_bytes > (uint64_t{1} << 30)) {
    return InvalidArgumentError("maxRequestBytes: must be in 1KiB..1GiB");
  }
  for (const std::string& url : forward) {
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
      return InvalidArgumentError("forward: \"" + url +
                                  "\" is not an http:// or https:// URL");
    }
  }
  if (forward_timeout < std::chrono::milliseconds(100)) {
    return InvalidArgumentError("forwardTimeout: must be at least 100ms");
  }
  if (queue_max_bytes < (uint64_t{1} << 20)) {
    return InvalidArgumentError("queueMaxBytes: must be at least 1MiB");
  }
  for (const auto& [key, list] :
       {std::pair{"namespaceLabels", &series.namespace_labels},
        std::pair{"podLabels", &series.pod_labels},
        std::pair{"nodeLabels", &series.node_labels}}) {
    if (list->empty()) {
      return InvalidArgumentError(std::string(key) +
                                  ": needs at least one label name");
    }
  }
  if (ownership_refresh < std::chrono::milliseconds(100)) {
    return InvalidArgumentError("ownershipRefresh: must be at least 100ms");
  }
  if (ownership_history < ownership_refresh) {
    return InvalidArgumentError(
        "ownershipHistory: must be at least ownershipRefresh");
  }
  if (sample_resolution < std::chrono::seconds(1)) {
    return InvalidArgumentError("sampleResolution: must be at least 1s");
  }
  if (sample_retention < sample_resolution) {
    return InvalidArgumentError(
        "sampleRetention: must be at least sampleResolution");
  }
  return OkStatus();
}

}  // namespace lens
