// The `jobs:` section (lens-jobs): its keys, decoders and rules.
#include "scheduled/config.h"

#include "core/config_decode.h"

namespace lens {
namespace {

// A byte count of the event server's bounds: 1 MiB .. 1 GiB.
constexpr int kMinServerBytes = 1 << 20;
constexpr int kMaxServerBytes = 1 << 30;

}  // namespace

namespace config {
namespace {

template <std::chrono::milliseconds JobsOptions::*field>
Status DecodeJobsDuration(const Ctx& ctx, const YAML::Node& v,
                          const std::string& path, JobsOptions* out) {
  LENS_ASSIGN_OR_RETURN(out->*field,
                        DecodeWith<std::chrono::milliseconds>(
                            ctx, v, path, "a duration", &ParseDuration));
  if (out->*field < std::chrono::milliseconds(100)) {
    return ctx.Error(v, path, "must be at least 100ms");
  }
  return OkStatus();
}

// A comma-separated scalar, or a YAML list of items (joined with commas).
template <std::string JobsOptions::*field>
Status DecodeJobsList(const Ctx& ctx, const YAML::Node& v,
                      const std::string& path, JobsOptions* out) {
  std::string joined;
  if (v.IsSequence()) {
    for (size_t i = 0; i < v.size(); ++i) {
      LENS_ASSIGN_OR_RETURN(
          std::string item,
          Scalar(ctx, v[i], path + "[" + std::to_string(i) + "]", "a string"));
      if (item.find(',') != std::string::npos) {
        return ctx.Error(v[i], path, "an item must not contain a comma");
      }
      joined += (joined.empty() ? "" : ",") + item;
    }
  } else {
    LENS_ASSIGN_OR_RETURN(joined, Scalar(ctx, v, path, "a string or a list"));
  }
  out->*field = joined;
  Status s = out->Validate();
  if (s.ok() || s.message().rfind(path.substr(path.rfind('.') + 1), 0) != 0) {
    return OkStatus();
  }
  return ctx.Error(v, path, s.message().substr(s.message().find(':') + 2));
}

constexpr FieldRule<JobsOptions> kJobsRules[] = {
    {"listenGrpc", FieldListen<JobsOptions, &JobsOptions::listen_grpc>},
    {"listenHttp", FieldListen<JobsOptions, &JobsOptions::listen_http>},
    {"bearerTokenFile",
     FieldText<JobsOptions, &JobsOptions::bearer_token_file>},
    {"tlsCertFile", FieldText<JobsOptions, &JobsOptions::tls_cert_file>},
    {"tlsKeyFile", FieldText<JobsOptions, &JobsOptions::tls_key_file>},
    {"maxAgentStreams",
     FieldInt<JobsOptions, &JobsOptions::max_agent_streams, 1, 65536>},
    {"nodeTokensFile", FieldText<JobsOptions, &JobsOptions::node_tokens_file>},
    {"acceptSharedAgentToken",
     FieldFlag<JobsOptions, &JobsOptions::accept_shared_agent_token>},
    {"maxQueueBytes", FieldInt<JobsOptions, &JobsOptions::max_queue_bytes,
                               kMinServerBytes, kMaxServerBytes>},
    {"maxSnapshotBytes", FieldInt<JobsOptions, &JobsOptions::max_snapshot_bytes,
                                  kMinServerBytes, kMaxServerBytes>},
    {"scheduledJobs", FieldFlag<JobsOptions, &JobsOptions::scheduled_jobs>},
    {"kubeconfig", FieldText<JobsOptions, &JobsOptions::kubeconfig>},
    {"context", FieldText<JobsOptions, &JobsOptions::context>},
    {"inCluster", FieldFlag<JobsOptions, &JobsOptions::in_cluster>},
    {"leaderElection", FieldFlag<JobsOptions, &JobsOptions::leader_election>},
    {"leaseNamespace", FieldText<JobsOptions, &JobsOptions::lease_namespace>},
    {"leaseName", FieldText<JobsOptions, &JobsOptions::lease_name>},
    {"identity", FieldText<JobsOptions, &JobsOptions::identity>},
    {"agents", DecodeJobsList<&JobsOptions::agents>},
    {"agentNamespace", FieldText<JobsOptions, &JobsOptions::agent_namespace>},
    {"agentSelector", FieldText<JobsOptions, &JobsOptions::agent_selector>},
    {"agentPort", FieldInt<JobsOptions, &JobsOptions::agent_port, 1, 65535>},
    {"agentScheme", FieldText<JobsOptions, &JobsOptions::agent_scheme>},
    {"agentTokenFile", FieldText<JobsOptions, &JobsOptions::agent_token_file>},
    {"agentCaFile", FieldText<JobsOptions, &JobsOptions::agent_ca_file>},
    {"agentTlsServerName",
     FieldText<JobsOptions, &JobsOptions::agent_tls_server_name>},
    {"agentInsecureSkipTlsVerify",
     FieldFlag<JobsOptions, &JobsOptions::agent_insecure_skip_tls_verify>},
    {"agentTimeout", DecodeJobsDuration<&JobsOptions::agent_timeout>},
    {"gpuAllocationInterval",
     DecodeJobsDuration<&JobsOptions::gpu_allocation_interval>},
    {"gpuConsumersInterval",
     DecodeJobsDuration<&JobsOptions::gpu_consumers_interval>},
    {"nodeInfoInterval", DecodeJobsDuration<&JobsOptions::node_info_interval>},
    {"deviceInfoInterval",
     DecodeJobsDuration<&JobsOptions::device_info_interval>},
    {"workloadStatusInterval",
     DecodeJobsDuration<&JobsOptions::workload_status_interval>},
    {"podStatusInterval",
     DecodeJobsDuration<&JobsOptions::pod_status_interval>},
    {"storageScanInterval",
     DecodeJobsDuration<&JobsOptions::storage_scan_interval>},
    {"storageMounts", DecodeJobsList<&JobsOptions::storage_mounts>},
    {"compatNames", FieldFlag<JobsOptions, &JobsOptions::compat_names>},
};

}  // namespace

constinit const SectionSpec<JobsOptions> kJobsSection{"jobs", kJobsRules};

}  // namespace config

Status JobsOptions::Validate() const {
  LENS_RETURN_IF_ERROR(config::ValidateListenAddress(listen_grpc, true)
                           .WithContext("listenGrpc"));
  LENS_RETURN_IF_ERROR(config::ValidateListenAddress(listen_http, true)
                           .WithContext("listenHttp"));
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return InvalidArgumentError(
        "tlsCertFile and tlsKeyFile must be set together");
  }
  if (max_agent_streams < 1 || max_agent_streams > 65536)
    return InvalidArgumentError("maxAgentStreams: must be in 1..65536");
  for (const auto& [value, key] :
       {std::pair(max_queue_bytes, "maxQueueBytes"),
        std::pair(max_snapshot_bytes, "maxSnapshotBytes")}) {
    if (value < kMinServerBytes || value > kMaxServerBytes) {
      return InvalidArgumentError(std::string(key) + ": must be in " +
                                  std::to_string(kMinServerBytes) + ".." +
                                  std::to_string(kMaxServerBytes) + " bytes");
    }
  }
  if (accept_shared_agent_token && node_tokens_file.empty()) {
    return InvalidArgumentError(
        "acceptSharedAgentToken: only means something with nodeTokensFile");
  }
  if (!kubeconfig.empty() && in_cluster) {
    return InvalidArgumentError(
        "kubeconfig: set either kubeconfig or inCluster, not both");
  }
  if (agent_scheme != "http" && agent_scheme != "https") {
    return InvalidArgumentError("agentScheme: must be http or https");
  }
  LENS_RETURN_IF_ERROR(ParseAgentList(agents).status());
  LENS_RETURN_IF_ERROR(ParseStorageMounts(storage_mounts).status());
  return OkStatus();
}

StatusOr<std::vector<std::pair<std::string, std::string>>>
JobsOptions::ParseAgentList(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = text.substr(start, comma - start);
    const size_t eq = item.find('=');
    if (eq == 0 || eq == std::string_view::npos ||
        (item.substr(eq + 1).rfind("http://", 0) != 0 &&
         item.substr(eq + 1).rfind("https://", 0) != 0)) {
      return InvalidArgumentError("agents: \"" + std::string(item) +
                                  "\" is not node=http(s)://host:port");
    }
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    start = comma + 1;
  }
  return out;
}

StatusOr<std::vector<std::array<std::string, 3>>>
JobsOptions::ParseStorageMounts(std::string_view text) {
  std::vector<std::array<std::string, 3>> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = text.substr(start, comma - start);
    const size_t eq = item.find('=');
    const size_t colon = item.find(':', eq == std::string_view::npos ? 0 : eq);
    if (eq == 0 || eq == std::string_view::npos ||
        colon == std::string_view::npos || colon == eq + 1 ||
        item.substr(colon + 1).rfind('/', 0) != 0) {
      return InvalidArgumentError("storageMounts: \"" + std::string(item) +
                                  "\" is not name=kind:/absolute/path");
    }
    out.push_back({std::string(item.substr(0, eq)),
                   std::string(item.substr(eq + 1, colon - eq - 1)),
                   std::string(item.substr(colon + 1))});
    start = comma + 1;
  }
  return out;
}

}  // namespace lens
