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

using P = TelemetryOptions;

// A key decoded into the processor's options.
template <auto decode>
Status Processor(const Ctx& ctx, const YAML::Node& v, const std::string& path,
                 T* out) {
  return Within<T, &T::processor, decode>(ctx, v, path, out);
}

// A key decoded into the processor's options, then checked with the
// section's rules at its value (FieldChecked).
template <auto decode>
Status Checked(const Ctx& ctx, const YAML::Node& v, const std::string& path,
               T* out) {
  return FieldChecked<T, Processor<decode>>(ctx, v, path, out);
}

template <uint64_t P::*field>
Status DecodeSize(const Ctx& ctx, const YAML::Node& v, const std::string& path,
                  P* out) {
  LENS_ASSIGN_OR_RETURN(
      out->*field, DecodeWith<uint64_t>(ctx, v, path, "a size", &ParseBytes));
  return OkStatus();
}

// `maxRequestBytes`: the body's bound, and 4 times it for what its snappy
// header may declare.
Status DecodeRequestBytes(const Ctx& ctx, const YAML::Node& v,
                          const std::string& path, P* out) {
  LENS_ASSIGN_OR_RETURN(
      uint64_t bytes,
      DecodeWith<uint64_t>(ctx, v, path, "a size", &ParseBytes));
  if (bytes < 1024 || bytes > (uint64_t{1} << 30)) {
    return ctx.Error(v, path, "must be in 1KiB..1GiB");
  }
  out->max_body_bytes = static_cast<size_t>(bytes);
  out->max_uncompressed_bytes = static_cast<size_t>(bytes) * 4;
  return OkStatus();
}

Status DecodeMaxSeries(const Ctx& ctx, const YAML::Node& v,
                       const std::string& path, P* out) {
  LENS_ASSIGN_OR_RETURN(int n, DecodeInt(ctx, v, path, 1, 100'000'000));
  out->sample_max_series = static_cast<size_t>(n);
  return OkStatus();
}

// A key of the series labels.
template <std::vector<std::string> SeriesIdentityLabels::*field>
Status DecodeSeriesList(const Ctx& ctx, const YAML::Node& v,
                        const std::string& path, P* out) {
  LENS_ASSIGN_OR_RETURN(out->series.*field, ListOf(ctx, v, path));
  return OkStatus();
}

using L = SeriesIdentityLabels;

constexpr FieldRule<T> kTelemetryRules[] = {
    {"listen", FieldChecked<T, FieldText<T, &T::listen>>},
    {"bearerTokenFile", FieldText<T, &T::bearer_token_file>},
    {"tlsCertFile", FieldText<T, &T::tls_cert_file>},
    {"tlsKeyFile", FieldText<T, &T::tls_key_file>},
    {"maxRequestBytes", Processor<DecodeRequestBytes>},
    {"forward", FieldChecked<T, FieldList<T, &T::forward>>},
    {"forwardTokenFile", FieldText<T, &T::forward_token_file>},
    {"forwardCaFile", FieldText<T, &T::forward_ca_file>},
    {"forwardInsecureSkipTlsVerify",
     FieldFlag<T, &T::forward_insecure_skip_tls_verify>},
    {"forwardTimeout", FieldChecked<T, FieldDuration<T, &T::forward_timeout>>},
    {"queueDir", Processor<FieldText<P, &P::queue_dir>>},
    {"queueMaxBytes", Checked<DecodeSize<&P::queue_max_bytes>>},
    {"queueFsync", Processor<FieldFlag<P, &P::queue_fsync>>},
    {"metricPrefixes", Processor<DecodeSeriesList<&L::metric_prefixes>>},
    {"namespaceLabels", Checked<DecodeSeriesList<&L::namespace_labels>>},
    {"podLabels", Checked<DecodeSeriesList<&L::pod_labels>>},
    {"nodeLabels", Checked<DecodeSeriesList<&L::node_labels>>},
    {"gpuIndexLabels", Processor<DecodeSeriesList<&L::gpu_index_labels>>},
    {"gpuSerialLabels", Processor<DecodeSeriesList<&L::gpu_serial_labels>>},
    {"gpuBdfLabels", Processor<DecodeSeriesList<&L::gpu_bdf_labels>>},
    {"gpuUuidLabels", Processor<DecodeSeriesList<&L::gpu_uuid_labels>>},
    {"rdmaDeviceLabels", Processor<DecodeSeriesList<&L::rdma_device_labels>>},
    {"compatNames", Processor<FieldFlag<P, &P::compat_names>>},
    {"ownershipRefresh", Checked<FieldDuration<P, &P::ownership_refresh>>},
    {"ownershipHistory", Processor<FieldDuration<P, &P::ownership_history>>},
    {"sampleHistory", Processor<FieldFlag<P, &P::sample_history>>},
    {"sampleResolution", Checked<FieldDuration<P, &P::sample_resolution>>},
    {"sampleRetention", Processor<FieldDuration<P, &P::sample_retention>>},
    {"sampleMaxSeries", Processor<DecodeMaxSeries>},
    {"logs", Processor<FieldFlag<P, &P::logs>>},
    {"selfPodPrefixes", Processor<FieldList<P, &P::self_pod_prefixes>>},
};

}  // namespace

constinit const SectionSpec<TelemetryConfigOptions> kTelemetrySection{
    "telemetry", kTelemetryRules};

}  // namespace config

Status TelemetryConfigOptions::Validate() const {
  LENS_RETURN_IF_ERROR(
      config::ValidateListenAddress(listen, true).WithContext("listen"));
  const TelemetryOptions& p = processor;
  if (p.max_body_bytes < 1024 || p.max_body_bytes > (size_t{1} << 30)) {
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
  if (p.queue_max_bytes < (uint64_t{1} << 20)) {
    return InvalidArgumentError("queueMaxBytes: must be at least 1MiB");
  }
  for (const auto& [key, list] :
       {std::pair{"namespaceLabels", &p.series.namespace_labels},
        std::pair{"podLabels", &p.series.pod_labels},
        std::pair{"nodeLabels", &p.series.node_labels}}) {
    if (list->empty()) {
      return InvalidArgumentError(std::string(key) +
                                  ": needs at least one label name");
    }
  }
  if (p.ownership_refresh < std::chrono::milliseconds(100)) {
    return InvalidArgumentError("ownershipRefresh: must be at least 100ms");
  }
  if (p.ownership_history < p.ownership_refresh) {
    return InvalidArgumentError(
        "ownershipHistory: must be at least ownershipRefresh");
  }
  if (p.sample_resolution < std::chrono::seconds(1)) {
    return InvalidArgumentError("sampleResolution: must be at least 1s");
  }
  if (p.sample_retention < p.sample_resolution) {
    return InvalidArgumentError(
        "sampleRetention: must be at least sampleResolution");
  }
  return OkStatus();
}

}  // namespace lens
