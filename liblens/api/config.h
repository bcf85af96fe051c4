// The `api:` section of the configuration file: lens-api. Owned here;
// registered in service/config.cc.
#ifndef LENS_API_CONFIG_H_
#define LENS_API_CONFIG_H_

#include <chrono>
#include <string>

#include "core/config_section.h"
#include "lens/status.h"

namespace lens {

// `api:` section: lens-api, the REST API and the dashboard (docs/api.md).
struct ApiConfigOptions {
  // `listen`: host:port of /api/v1, the dashboard at /, /metrics.
  // `bearerTokenFile`: required on /api/v1 and /metrics (the dashboard's
  // page and assets hold no data and stay public). `tlsCertFile`,
  // `tlsKeyFile`: HTTPS.
  std::string listen = "0.0.0.0:8080";
  std::string bearer_token_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  // `cluster`: the name this API answers `cluster=` for.
  std::string cluster = "default";
  // `dashboard`: serve the dashboard at /.
  bool dashboard = true;
  // `prometheusUrl`: where time series come from, a PromQL server
  // (VictoriaMetrics or Prometheus); empty: the store's sample history.
  // `prometheusTokenFile`, `prometheusCaFile`, `prometheusTimeout`.
  std::string prometheus_url;
  std::string prometheus_token_file;
  std::string prometheus_ca_file;
  std::chrono::milliseconds prometheus_timeout{10000};
  // `clustersFile`: the cluster directory lens-multicluster publishes
  // (core/cluster_directory.h; a Secret mounted as a file), re-read when it
  // changes; every cluster in it is served for `cluster=<name>`. Empty: only
  // `cluster`.
  std::string clusters_file;

  // InvalidArgument naming the key.
  Status Validate() const;
};

namespace config {
extern const SectionSpec<ApiConfigOptions> kApiSection;
}  // namespace config

}  // namespace lens

#endif  // LENS_API_CONFIG_H_
