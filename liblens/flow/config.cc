// The `netflow:` section: its keys, decoders and rules.
#include "flow/config.h"

#include "core/config_decode.h"

namespace lens {
namespace config {
namespace {

using F = NetflowOptions;
constexpr FieldRule<F> kNetflowRules[] = {
    {"listenAddress", FieldListen<F, &F::listen_address>},
    {"interval", FieldDuration<F, &F::interval>},
    {"bpfStatsWindow", FieldDuration<F, &F::bpf_stats_window>},
    {"bpfStatsPeriod", FieldDuration<F, &F::bpf_stats_period>},
    {"policyFile", FieldText<F, &F::policy_file>},
    {"topRemote", FieldInt<F, &F::top_remote, 0, 1000>},
    {"maxFlows", FieldInt<F, &F::max_flows, 1024, 4 << 20>},
    {"procfsRoot", FieldText<F, &F::procfs_root>},
    {"bearerTokenFile", FieldText<F, &F::bearer_token_file>},
    {"tlsCertFile", FieldText<F, &F::tls_cert_file>},
    {"tlsKeyFile", FieldText<F, &F::tls_key_file>},
};

}  // namespace

constinit const SectionSpec<NetflowOptions> kNetflowSection{"netflow",
                                                            kNetflowRules};

}  // namespace config

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
