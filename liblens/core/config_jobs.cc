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

Status DecodeDatabase(const Ctx& ctx, const YAML::Node& node,
                      const std::string& path, DatabaseOptions* out) {
  return DecodeMap<DatabaseOptions>(ctx, node, path, kDatabaseRules, out);
}

std::vector<std::string_view> JobsKeys() { return KeysOf(kJobsRules); }
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
