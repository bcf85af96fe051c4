// The `netflow:` section.
#include "core/config_netflow.h"

#include "core/config.h"

namespace lens::config {
namespace {

using F = NetflowOptions;

template <int F::*field, int kMin, int kMax>
Status DecodeBounded(const Ctx& ctx, const YAML::Node& v,
                     const std::string& path, F* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, DecodeInt(ctx, v, path, kMin, kMax));
  return OkStatus();
}

template <std::chrono::milliseconds F::*field>
Status DecodeDuration(const Ctx& ctx, const YAML::Node& v,
                      const std::string& path, F* out) {
  LENS_ASSIGN_OR_RETURN(std::string text, Scalar(ctx, v, path, "a duration"));
  StatusOr<std::chrono::milliseconds> d = ParseDuration(text);
  if (!d.ok()) return ctx.Error(v, path, d.status().message());
  out->*field = *d;
  return OkStatus();
}

Status DecodeListen(const Ctx& ctx, const YAML::Node& v,
                    const std::string& path, F* out) {
  LENS_ASSIGN_OR_RETURN(out->listen_address, Scalar(ctx, v, path, "a string"));
  Status s =
      ValidateListenAddress(out->listen_address, /*allow_any_port=*/true);
  return s.ok() ? s : ctx.Error(v, path, s.message());
}

constexpr FieldRule<F> kNetflowRules[] = {
    {"listenAddress", DecodeListen},
    {"interval", DecodeDuration<&F::interval>},
    {"bpfStatsWindow", DecodeDuration<&F::bpf_stats_window>},
    {"bpfStatsPeriod", DecodeDuration<&F::bpf_stats_period>},
    {"policyFile", FieldText<F, &F::policy_file>},
    {"topRemote", DecodeBounded<&F::top_remote, 0, 1000>},
    {"maxFlows", DecodeBounded<&F::max_flows, 1024, 4 << 20>},
    {"procfsRoot", FieldText<F, &F::procfs_root>},
    {"bearerTokenFile", FieldText<F, &F::bearer_token_file>},
    {"tlsCertFile", FieldText<F, &F::tls_cert_file>},
    {"tlsKeyFile", FieldText<F, &F::tls_key_file>},
};

}  // namespace

Status DecodeNetflow(const Ctx& ctx, const YAML::Node& node,
                     const std::string& path, NetflowOptions* out) {
  return DecodeMap<NetflowOptions>(ctx, node, path, kNetflowRules, out);
}

std::vector<std::string_view> NetflowKeys() { return KeysOf(kNetflowRules); }

}  // namespace lens::config

namespace lens {

Status NetflowOptions::Validate() const {
  LENS_RETURN_IF_ERROR(config::ValidateListenAddress(listen_address, true)
                           .WithContext("listenAddress"));
  if (interval < std::chrono::milliseconds(100)) {
    return InvalidArgumentError("interval: must be at least 100ms");
  }
  if (top_remote < 0 || top_remote > 1000) {
    return InvalidArgumentError("topRemote: must be in 0..1000");
  }
  if (max_flows < 1024 || max_flows > (4 << 20)) {
    return InvalidArgumentError("maxFlows: must be in 1024..4194304");
  }
  if (bpf_stats_window.count() < 0 || bpf_stats_period < bpf_stats_window ||
      bpf_stats_period <= std::chrono::milliseconds(0)) {
    return InvalidArgumentError(
        "bpfStatsWindow: must be between 0 and bpfStatsPeriod (" +
        std::to_string(bpf_stats_window.count()) + "ms of " +
        std::to_string(bpf_stats_period.count()) + "ms)");
  }
  if (procfs_root.empty()) return InvalidArgumentError("procfsRoot: empty");
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return InvalidArgumentError(
        "tlsCertFile and tlsKeyFile must be set together");
  }
  return OkStatus();
}

}  // namespace lens
