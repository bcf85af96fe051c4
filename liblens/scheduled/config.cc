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

using Jobs = ScheduledJobsOptions;

// A key decoded into the jobs' options.
template <auto decode>
Status Job(const Ctx& ctx, const YAML::Node& v, const std::string& path,
           JobsOptions* out) {
  return Within<JobsOptions, &JobsOptions::scheduled, decode>(ctx, v, path,
                                                              out);
}

// A duration of at least 100ms.
StatusOr<std::chrono::milliseconds> FileDuration(const Ctx& ctx,
                                                 const YAML::Node& v,
                                                 const std::string& path) {
  LENS_ASSIGN_OR_RETURN(
      auto d, DecodeWith<std::chrono::milliseconds>(ctx, v, path, "a duration",
                                                    &ParseDuration));
  if (d < std::chrono::milliseconds(100)) {
    return ctx.Error(v, path, "must be at least 100ms");
  }
  return d;
}

Status DecodeAgentTimeout(const Ctx& ctx, const YAML::Node& v,
                          const std::string& path, Jobs* out) {
  LENS_ASSIGN_OR_RETURN(out->agent_timeout, FileDuration(ctx, v, path));
  return OkStatus();
}

// `<job>Interval`: the job runs every interval, a run taking 90% of it.
template <JobSchedule Jobs::*field>
Status DecodeInterval(const Ctx& ctx, const YAML::Node& v,
                      const std::string& path, Jobs* out) {
  LENS_ASSIGN_OR_RETURN(auto interval, FileDuration(ctx, v, path));
  out->*field = JobSchedule::Every(interval);
  return OkStatus();
}

// A comma-separated scalar, or a YAML list of items (no item may hold a
// comma), each parsed by `parse` (InvalidArgument naming the item).
template <typename T>
StatusOr<std::vector<T>> DecodeItems(
    const Ctx& ctx, const YAML::Node& v, const std::string& path,
    StatusOr<T> (*parse)(std::string_view item)) {
  std::vector<T> out;
  auto add = [&](const YAML::Node& at, const std::string& text) -> Status {
    size_t start = 0;
    while (start < text.size()) {
      size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      auto item = parse(std::string_view(text).substr(start, comma - start));
      if (!item.ok()) return ctx.Error(at, path, item.status().message());
      out.push_back(*std::move(item));
      start = comma + 1;
    }
    return OkStatus();
  };
  if (v.IsSequence()) {
    for (size_t i = 0; i < v.size(); ++i) {
      LENS_ASSIGN_OR_RETURN(
          std::string item,
          Scalar(ctx, v[i], path + "[" + std::to_string(i) + "]", "a string"));
      if (item.find(',') != std::string::npos) {
        return ctx.Error(v[i], path, "an item must not contain a comma");
      }
      LENS_RETURN_IF_ERROR(add(v[i], item));
    }
  } else {
    LENS_ASSIGN_OR_RETURN(std::string text,
                          Scalar(ctx, v, path, "a string or a list"));
    LENS_RETURN_IF_ERROR(add(v, text));
  }
  return out;
}

// "node=http(s)://host:port".
StatusOr<NodeAgentTarget> ParseAgent(std::string_view item) {
  const size_t eq = item.find('=');
  if (eq == 0 || eq == std::string_view::npos ||
      (item.substr(eq + 1).rfind("http://", 0) != 0 &&
       item.substr(eq + 1).rfind("https://", 0) != 0)) {
    return InvalidArgumentError("\"" + std::string(item) +
                                "\" is not node=http(s)://host:port");
  }
  return NodeAgentTarget{std::string(item.substr(0, eq)),
                         std::string(item.substr(eq + 1))};
}

// "name=kind:/absolute/path".
StatusOr<StorageMount> ParseMount(std::string_view item) {
  const size_t eq = item.find('=');
  const size_t colon = item.find(':', eq == std::string_view::npos ? 0 : eq);
  if (eq == 0 || eq == std::string_view::npos ||
      colon == std::string_view::npos || colon == eq + 1 ||
      item.substr(colon + 1).rfind('/', 0) != 0) {
    return InvalidArgumentError("\"" + std::string(item) +
                                "\" is not name=kind:/absolute/path");
  }
  return StorageMount{std::string(item.substr(0, eq)),
                      std::string(item.substr(eq + 1, colon - eq - 1)),
                      std::string(item.substr(colon + 1))};
}

Status DecodeAgents(const Ctx& ctx, const YAML::Node& v,
                    const std::string& path, Jobs* out) {
  LENS_ASSIGN_OR_RETURN(out->agents, DecodeItems(ctx, v, path, &ParseAgent));
  return OkStatus();
}

Status DecodeMounts(const Ctx& ctx, const YAML::Node& v,
                    const std::string& path, Jobs* out) {
  LENS_ASSIGN_OR_RETURN(out->storage_mounts,
                        DecodeItems(ctx, v, path, &ParseMount));
  return OkStatus();
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
    {"agentTokenFile", FieldText<JobsOptions, &JobsOptions::agent_token_file>},
    {"agents", Job<DecodeAgents>},
    {"agentNamespace", Job<FieldText<Jobs, &Jobs::agent_namespace>>},
    {"agentSelector", Job<FieldText<Jobs, &Jobs::agent_selector>>},
    {"agentPort", Job<FieldInt<Jobs, &Jobs::agent_port, 1, 65535>>},
    {"agentScheme", Job<FieldText<Jobs, &Jobs::agent_scheme>>},
    {"agentCaFile", Job<FieldText<Jobs, &Jobs::agent_ca_file>>},
    {"agentTlsServerName", Job<FieldText<Jobs, &Jobs::agent_tls_server_name>>},
    {"agentInsecureSkipTlsVerify",
     Job<FieldFlag<Jobs, &Jobs::agent_insecure_skip_tls_verify>>},
    {"agentTimeout", Job<DecodeAgentTimeout>},
    {"gpuAllocationInterval", Job<DecodeInterval<&Jobs::gpu_allocation>>},
    {"gpuConsumersInterval", Job<DecodeInterval<&Jobs::gpu_consumers>>},
    {"nodeInfoInterval", Job<DecodeInterval<&Jobs::node_info>>},
    {"deviceInfoInterval", Job<DecodeInterval<&Jobs::device_info>>},
    {"workloadStatusInterval", Job<DecodeInterval<&Jobs::workload_status>>},
    {"podStatusInterval", Job<DecodeInterval<&Jobs::pod_status>>},
    {"storageScanInterval", Job<DecodeInterval<&Jobs::storage_scan>>},
    {"storageMounts", Job<DecodeMounts>},
    {"compatNames", Job<FieldFlag<Jobs, &Jobs::compat_names>>},
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
  if (scheduled.agent_timeout < std::chrono::milliseconds(100)) {
    return InvalidArgumentError("agentTimeout: must be at least 100ms");
  }
  return scheduled.Validate();
}

}  // namespace lens
