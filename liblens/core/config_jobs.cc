// The `jobs:` section (lens-jobs) and the `database:` section (the store every
// cluster daemon and `lens db` use).
#include "core/config_jobs.h"

#include "core/redact.h"
#include "lens/config.h"

namespace lens::config {
namespace {

template <typename S, std::string S::*field>
Status DecodeString(const Ctx& ctx, const YAML::Node& v,
                    const std::string& path, S* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, Scalar(ctx, v, path, "a string"));
  return OkStatus();
}

template <std::string JobsOptions::*field>
Status DecodeListen(const Ctx& ctx, const YAML::Node& v,
                    const std::string& path, JobsOptions* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, Scalar(ctx, v, path, "a string"));
  Status s = ValidateListenAddress(out->*field, /*allow_any_port=*/true);
  return s.ok() ? s : ctx.Error(v, path, s.message());
}

constexpr FieldRule<JobsOptions> kJobsRules[] = {
    {"listenGrpc", DecodeListen<&JobsOptions::listen_grpc>},
    {"listenHttp", DecodeListen<&JobsOptions::listen_http>},
    {"bearerTokenFile",
     DecodeString<JobsOptions, &JobsOptions::bearer_token_file>},
    {"tlsCertFile", DecodeString<JobsOptions, &JobsOptions::tls_cert_file>},
    {"tlsKeyFile", DecodeString<JobsOptions, &JobsOptions::tls_key_file>},
    {"maxAgentStreams",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        JobsOptions* out) {
       LENS_ASSIGN_OR_RETURN(out->max_agent_streams,
                             DecodeInt(ctx, v, path, 1, 65536));
       return OkStatus();
     }},
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
    {"kubeconfig", DecodeString<ControllerConfigOptions,
                                &ControllerConfigOptions::kubeconfig>},
    {"context",
     DecodeString<ControllerConfigOptions, &ControllerConfigOptions::context>},
    {"inCluster", DecodeFlag<&ControllerConfigOptions::in_cluster>},
    {"listenHttp", DecodeChecked<&ControllerConfigOptions::listen_http>},
    {"bearerTokenFile",
     DecodeString<ControllerConfigOptions,
                  &ControllerConfigOptions::bearer_token_file>},
    {"tlsCertFile", DecodeString<ControllerConfigOptions,
                                 &ControllerConfigOptions::tls_cert_file>},
    {"tlsKeyFile", DecodeString<ControllerConfigOptions,
                                &ControllerConfigOptions::tls_key_file>},
    {"gpuResources", DecodeChecked<&ControllerConfigOptions::gpu_resources>},
    {"leaderElection", DecodeFlag<&ControllerConfigOptions::leader_election>},
    {"leaseNamespace",
     DecodeChecked<&ControllerConfigOptions::lease_namespace>},
    {"leaseName", DecodeChecked<&ControllerConfigOptions::lease_name>},
    {"identity",
     DecodeString<ControllerConfigOptions, &ControllerConfigOptions::identity>},
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
  return OkStatus();
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
