// The flags of lens-telemetry as config keys (`telemetry:`, `database:`);
// defaults are the config's (docs/telemetry.md).
#ifndef LENS_DAEMONS_TELEMETRY_FLAGS_H_
#define LENS_DAEMONS_TELEMETRY_FLAGS_H_

#include "config_flags.h"

namespace lens::cli {

inline constexpr ConfigFlag kTelemetryFlags[] = {
    {"--listen", "telemetry.listen", ConfigFlag::kText,
     "host:port of remote write (/api/v1/write), logs (/v1/logs), the caches "
     "and /metrics (default 0.0.0.0:8994; port 0 picks a free one)"},
    {"--database", "database.url", ConfigFlag::kText,
     "store URL: sqlite:///path.db or postgresql://... (default "
     "sqlite:///var/lib/lens/lens.db; also LENS_STORE_URL)"},
    {"--forward", "telemetry.forward", ConfigFlag::kText,
     "remote-write URLs the enriched samples go to, comma-separated (e.g. "
     "http://victoria-metrics:8428/api/v1/write)"},
    {"--forward-token-file", "telemetry.forwardTokenFile", ConfigFlag::kText,
     "bearer token sent to the forward targets"},
    {"--forward-ca", "telemetry.forwardCaFile", ConfigFlag::kText,
     "PEM CA of https forward targets"},
    {"--queue-dir", "telemetry.queueDir", ConfigFlag::kText,
     "directory of the on-disk forward queues (default "
     "/var/lib/lens/telemetry)"},
    {"--queue-max-bytes", "telemetry.queueMaxBytes", ConfigFlag::kText,
     "size of each forward queue (default 1GiB); when full, senders get 503 "
     "with Retry-After"},
    {"--sample-history", "telemetry.sampleHistory", ConfigFlag::kSetTrue,
     "also keep the enriched series in the store (one machine, no "
     "VictoriaMetrics)"},
    {"--metric-prefixes", "telemetry.metricPrefixes", ConfigFlag::kText,
     "metric-name prefixes of the series enriched, comma-separated (empty: "
     "all)"},
    {"--compat-names", "telemetry.compatNames", ConfigFlag::kSetTrue,
     "also emit the original's workload_<name> copy of each enriched series"},
    {"--no-logs", "telemetry.logs", ConfigFlag::kSetFalse,
     "turn the training-log path (/v1/logs, /logs) off"},
    {"--bearer-token-file", "telemetry.bearerTokenFile", ConfigFlag::kText,
     "require this bearer token on every route but /healthz and /readyz"},
    {"--tls-cert", "telemetry.tlsCertFile", ConfigFlag::kText,
     "serve HTTPS with this PEM certificate"},
    {"--tls-key", "telemetry.tlsKeyFile", ConfigFlag::kText,
     "PEM private key of --tls-cert"},
};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_TELEMETRY_FLAGS_H_
