// The flags of lens-jobs as config keys (`jobs:`, `database:`); defaults are
// the config's (docs/containers.md).
#ifndef LENS_DAEMONS_JOBS_FLAGS_H_
#define LENS_DAEMONS_JOBS_FLAGS_H_

#include "config_flags.h"

namespace lens::cli {

inline constexpr ConfigFlag kJobsFlags[] = {
    {"--listen-grpc", "jobs.listenGrpc", ConfigFlag::kText,
     "host:port of the container event server (default 0.0.0.0:50051; port "
     "0 picks a free one)"},
    {"--listen-http", "jobs.listenHttp", ConfigFlag::kText,
     "host:port serving /metrics and /healthz (default 0.0.0.0:8993)"},
    {"--database", "database.url", ConfigFlag::kText,
     "store URL: sqlite:///path.db or postgresql://... (default "
     "sqlite:///var/lib/lens/lens.db; also LENS_STORE_URL)"},
    {"--bearer-token-file", "jobs.bearerTokenFile", ConfigFlag::kText,
     "require this bearer token from node agents and on every HTTP route "
     "but /healthz"},
    {"--tls-cert", "jobs.tlsCertFile", ConfigFlag::kText,
     "serve gRPC and HTTP over TLS with this PEM certificate"},
    {"--tls-key", "jobs.tlsKeyFile", ConfigFlag::kText,
     "PEM private key of --tls-cert"},
    {"--max-agent-streams", "jobs.maxAgentStreams", ConfigFlag::kText,
     "node agents streaming at once (default 2048); more are refused"},
};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_JOBS_FLAGS_H_
