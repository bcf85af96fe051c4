// The flags of lens-api as config keys (`api:`, `database:`); defaults are
// the config's (docs/api.md).
#ifndef LENS_DAEMONS_API_FLAGS_H_
#define LENS_DAEMONS_API_FLAGS_H_

#include "config_flags.h"

namespace lens::cli {

inline constexpr ConfigFlag kApiFlags[] = {
    {"--listen", "api.listen", ConfigFlag::kText,
     "host:port of the REST API (/api/v1), the dashboard (/) and /metrics "
     "(default 0.0.0.0:8080; port 0 picks a free one)"},
    {"--database", "database.url", ConfigFlag::kText,
     "store URL: sqlite:///path.db or postgresql://... (default "
     "sqlite:///var/lib/lens/lens.db; also LENS_STORE_URL)"},
    {"--cluster", "api.cluster", ConfigFlag::kText,
     "the cluster name this API answers `cluster=` for (default \"default\")"},
    {"--prometheus-url", "api.prometheusUrl", ConfigFlag::kText,
     "PromQL server the time series come from (VictoriaMetrics or "
     "Prometheus, e.g. http://victoria-metrics:8428); default: the store's "
     "sample history"},
    {"--prometheus-token-file", "api.prometheusTokenFile", ConfigFlag::kText,
     "bearer token sent to --prometheus-url"},
    {"--prometheus-ca", "api.prometheusCaFile", ConfigFlag::kText,
     "PEM CA of an https --prometheus-url"},
    {"--clusters-file", "api.clustersFile", ConfigFlag::kText,
     "lens-multicluster's cluster directory: serve cluster=<name> for each "
     "cluster in it (re-read when it changes)"},
    {"--no-dashboard", "api.dashboard", ConfigFlag::kSetFalse,
     "serve the REST API only, no dashboard at /"},
    {"--bearer-token-file", "api.bearerTokenFile", ConfigFlag::kText,
     "require this bearer token on /api/v1 and /metrics (the dashboard's "
     "page asks for it)"},
    {"--tls-cert", "api.tlsCertFile", ConfigFlag::kText,
     "serve HTTPS with this PEM certificate"},
    {"--tls-key", "api.tlsKeyFile", ConfigFlag::kText,
     "PEM private key of --tls-cert"},
};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_API_FLAGS_H_
