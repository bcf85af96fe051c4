// The `jobs:` section (lens-jobs) and the `database:` section (the store every
// cluster daemon and `lens db` use).
#include "core/config_jobs.h"

#include "core/config.h"
#include "core/redact.h"

namespace lens::config {
namespace {

template <std::string JobsOptions::*field>
Status DecodeListen(const Ctx& ctx, const YAML::Node& v,
                    const std::string& path, JobsOptions* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, Scalar(ctx, v, path, "a string"));
  Status s = ValidateListenAddress(out->*field, /*allow_any_port=*/true);
  return s.ok() ? s : ctx.Error(v, path, s.message());
}

template <bool JobsOptions::*field>
Status DecodeJobsFlag(const Ctx& ctx, const YAML::Node& v,
                      const std::string& path, JobsOptions* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, DecodeBool(ctx, v, path));
  return OkStatus();
}

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

// A byte count of the event server's bounds: 1 MiB .. 1 GiB.
constexpr int kMinServerBytes = 1 << 20;
constexpr int kMaxServerBytes = 1 << 30;

template <int JobsOptions::*field>
Status DecodeJobsBytes(const Ctx& ctx, const YAML::Node& v,
                       const std::string& path, JobsOptions* out) {
  LENS_ASSIGN_OR_RETURN(
      out->*field, DecodeInt(ctx, v, path, kMinServerBytes, kMaxServerBytes));
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
    {"listenGrpc", DecodeListen<&JobsOptions::listen_grpc>},
    {"listenHttp", DecodeListen<&JobsOptions::listen_http>},
    {"bearerTokenFile",
     FieldText<JobsOptions, &JobsOptions::bearer_token_file>},
    {"tlsCertFile", FieldText<JobsOptions, &JobsOptions::tls_cert_file>},
    {"tlsKeyFile", FieldText<JobsOptions, &JobsOptions::tls_key_file>},
    {"maxAgentStreams",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        JobsOptions* out) {
       LENS_ASSIGN_OR_RETURN(out->max_agent_streams,
                             DecodeInt(ctx, v, path, 1, 65536));
       return OkStatus();
     }},
    {"nodeTokensFile", FieldText<JobsOptions, &JobsOptions::node_tokens_file>},
    {"acceptSharedAgentToken",
     DecodeJobsFlag<&JobsOptions::accept_shared_agent_token>},
    {"maxQueueBytes", DecodeJobsBytes<&JobsOptions::max_queue_bytes>},
    {"maxSnapshotBytes", DecodeJobsBytes<&JobsOptions::max_snapshot_bytes>},
    {"scheduledJobs", DecodeJobsFlag<&JobsOptions::scheduled_jobs>},
    {"kubeconfig", FieldText<JobsOptions, &JobsOptions::kubeconfig>},
    {"context", FieldText<JobsOptions, &JobsOptions::context>},
    {"inCluster", DecodeJobsFlag<&JobsOptions::in_cluster>},
    {"leaderElection", DecodeJobsFlag<&JobsOptions::leader_election>},
    {"leaseNamespace", FieldText<JobsOptions, &JobsOptions::lease_namespace>},
    {"leaseName", FieldText<JobsOptions, &JobsOptions::lease_name>},
    {"identity", FieldText<JobsOptions, &JobsOptions::identity>},
    {"agents", DecodeJobsList<&JobsOptions::agents>},
    {"agentNamespace", FieldText<JobsOptions, &JobsOptions::agent_namespace>},
    {"agentSelector", FieldText<JobsOptions, &JobsOptions::agent_selector>},
    {"agentPort",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        JobsOptions* out) {
       LENS_ASSIGN_OR_RETURN(out->agent_port,
                             DecodeInt(ctx, v, path, 1, 65535));
       return OkStatus();
     }},
    {"agentScheme", FieldText<JobsOptions, &JobsOptions::agent_scheme>},
    {"agentTokenFile", FieldText<JobsOptions, &JobsOptions::agent_token_file>},
    {"agentCaFile", FieldText<JobsOptions, &JobsOptions::agent_ca_file>},
    {"agentTlsServerName",
     FieldText<JobsOptions, &JobsOptions::agent_tls_server_name>},
    {"agentInsecureSkipTlsVerify",
     DecodeJobsFlag<&JobsOptions::agent_insecure_skip_tls_verify>},
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
    {"compatNames", DecodeJobsFlag<&JobsOptions::compat_names>},
};

template <bool ControllerConfigOptions::*field>
Status DecodeFlag(const Ctx& ctx, const YAML::Node& v, const std::string& path,
                  ControllerConfigOptions* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, DecodeBool(ctx, v, path));
  return OkStatus();
}

template <std::string ControllerConfigOptions::*field>
Status DecodeChecked(const Ctx& ctx, const YAML::Node& v,
                     const std::string& path, ControllerConfigOptions* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, Scalar(ctx, v, path, "a string"));
  // The whole struct's rule for this key, located at the value.
  Status s = out->Validate();
  if (s.ok() || s.message().rfind(path.substr(path.rfind('.') + 1), 0) != 0) {
    return OkStatus();
  }
  return ctx.Error(v, path, s.message().substr(s.message().find(':') + 2));
}

constexpr FieldRule<ControllerConfigOptions> kControllerRules[] = {
    {"kubeconfig",
     FieldText<ControllerConfigOptions, &ControllerConfigOptions::kubeconfig>},
    {"context",
     FieldText<ControllerConfigOptions, &ControllerConfigOptions::context>},
    {"inCluster", DecodeFlag<&ControllerConfigOptions::in_cluster>},
    {"listenHttp", DecodeChecked<&ControllerConfigOptions::listen_http>},
    {"bearerTokenFile", FieldText<ControllerConfigOptions,
                                  &ControllerConfigOptions::bearer_token_file>},
    {"tlsCertFile", FieldText<ControllerConfigOptions,
                              &ControllerConfigOptions::tls_cert_file>},
    {"tlsKeyFile", FieldText<ControllerConfigOptions,
                             &ControllerConfigOptions::tls_key_file>},
    {"gpuResources", DecodeChecked<&ControllerConfigOptions::gpu_resources>},
    {"leaderElection", DecodeFlag<&ControllerConfigOptions::leader_election>},
    {"leaseNamespace",
     DecodeChecked<&ControllerConfigOptions::lease_namespace>},
    {"leaseName", DecodeChecked<&ControllerConfigOptions::lease_name>},
    {"identity",
     FieldText<ControllerConfigOptions, &ControllerConfigOptions::identity>},
};

constexpr FieldRule<DatabaseOptions> kDatabaseRules[] = {
    {"url",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        DatabaseOptions* out) {
       LENS_ASSIGN_OR_RETURN(out->url, Scalar(ctx, v, path, "a string"));
       Status s = out->Validate();
       return s.ok() ? s : ctx.Error(v, path, s.message().substr(5));
     }},
};

}  // namespace

Status DecodeJobs(const Ctx& ctx, const YAML::Node& node,
                  const std::string& path, JobsOptions* out) {
  return DecodeMap<JobsOptions>(ctx, node, path, kJobsRules, out);
}

Status DecodeController(const Ctx& ctx, const YAML::Node& node,
                        const std::string& path, ControllerConfigOptions* out) {
  return DecodeMap<ControllerConfigOptions>(ctx, node, path, kControllerRules,
                                            out);
}

Status DecodeDatabase(const Ctx& ctx, const YAML::Node& node,
                      const std::string& path, DatabaseOptions* out) {
  return DecodeMap<DatabaseOptions>(ctx, node, path, kDatabaseRules, out);
}

std::vector<std::string_view> JobsKeys() { return KeysOf(kJobsRules); }
std::vector<std::string_view> ControllerKeys() {
  return KeysOf(kControllerRules);
}
std::vector<std::string_view> DatabaseKeys() { return KeysOf(kDatabaseRules); }

}  // namespace lens::config

namespace lens {

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
    if (value < config::kMinServerBytes || value > config::kMaxServerBytes) {
      return InvalidArgumentError(
          std::string(key) + ": must be in " +
          std::to_string(config::kMinServerBytes) + ".." +
          std::to_string(config::kMaxServerBytes) + " bytes");
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

namespace {

// A DNS-1123 name (a namespace or a Lease name): lower-case alphanumerics
// and '-', at most 63 (namespace) or 253 characters.
bool DnsName(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max || s.front() == '-' || s.back() == '-') {
    return false;
  }
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
          (max > 63 && c == '.'))) {
      return false;
    }
  }
  return true;
}

}  // namespace

Status ControllerConfigOptions::Validate() const {
  LENS_RETURN_IF_ERROR(config::ValidateListenAddress(listen_http, true)
                           .WithContext("listenHttp"));
  if (!kubeconfig.empty() && in_cluster) {
    return InvalidArgumentError(
        "kubeconfig: set either kubeconfig or inCluster, not both");
  }
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return InvalidArgumentError(
        "tlsCertFile and tlsKeyFile must be set together");
  }
  if (gpu_resources.empty()) {
    return InvalidArgumentError(
        "gpuResources: is empty (e.g. amd.com/gpu,nvidia.com/gpu)");
  }
  size_t start = 0;
  while (start <= gpu_resources.size()) {
    size_t comma = gpu_resources.find(',', start);
    if (comma == std::string::npos) comma = gpu_resources.size();
    const std::string_view item =
        std::string_view(gpu_resources).substr(start, comma - start);
    if (item.empty() || item.find(' ') != std::string_view::npos ||
        item.find('*') < item.size() - 1) {
      return InvalidArgumentError(
          "gpuResources: \"" + std::string(item) +
          "\" is not a resource name (domain/name, '*' only at the end)");
    }
    start = comma + 1;
  }
  if (!DnsName(lease_namespace, 63)) {
    return InvalidArgumentError("leaseNamespace: \"" + lease_namespace +
                                "\" is not a namespace name");
  }
  if (!DnsName(lease_name, 253)) {
    return InvalidArgumentError("leaseName: \"" + lease_name +
                                "\" is not a Lease name");
  }
  return OkStatus();
}

Status DatabaseOptions::Validate() const {
  if (url.empty()) return InvalidArgumentError("url: is empty");
  if (url.rfind("sqlite://", 0) != 0 && url.rfind("postgresql://", 0) != 0 &&
      url.rfind("postgres://", 0) != 0) {
    return InvalidArgumentError(
        "url: " + RedactCredentials(url) +
        " is not sqlite:///path.db or postgresql://user@host:5432/db");
  }
  return OkStatus();
}

}  // namespace lens
