// lens-api's options from the config: the `api:` and `database:` sections,
// the token files read.
#include "service/api_service.h"
#include "service/service_host.h"

namespace lens {

Status ApiServiceOptions::Validate() const {
  if (database_url.empty()) return InvalidArgumentError("database: empty URL");
  LENS_RETURN_IF_ERROR(http.Validate().WithContext("http"));
  LENS_RETURN_IF_ERROR(api.Validate().WithContext("api"));
  if (promql) LENS_RETURN_IF_ERROR(promql->Validate().WithContext("promql"));
  return OkStatus();
}

StatusOr<ApiServiceOptions> ApiServiceOptionsFromConfig(const Config& config) {
  LENS_RETURN_IF_ERROR(config.api.Validate().WithContext("api"));
  LENS_RETURN_IF_ERROR(config.database.Validate().WithContext("database"));
  const ApiConfigOptions& c = config.api;
  ApiServiceOptions o;
  o.database_url = config.database.url;
  LENS_ASSIGN_OR_RETURN(
      o.http, service::ServiceHttpOptions("api", c.listen, c.bearer_token_file,
                                          c.tls_cert_file, c.tls_key_file));
  // Browsers behind one ingress or proxy share its address: a per-peer cap
  // well above the node daemons' 64, still short of the whole cap so that
  // one host cannot hold every connection. Handlers wait on the store, so
  // more of them.
  o.http.max_connections_per_peer = 256;
  o.http.threads = 8;
  o.api.cluster = c.cluster;
  o.dashboard = c.dashboard;
  if (!c.prometheus_url.empty()) {
    PromQlSourceOptions p;
    p.url = c.prometheus_url;
    if (!c.prometheus_token_file.empty()) {
      LENS_ASSIGN_OR_RETURN(p.bearer_token,
                            ReadBearerTokenFile(c.prometheus_token_file,
                                                "api.prometheusTokenFile"));
    }
    p.ca_file = c.prometheus_ca_file;
    p.timeout = c.prometheus_timeout;
    o.promql = std::move(p);
  }
  if (!c.clusters_file.empty()) {
    ClusterDirectoryOptions d;
    d.path = c.clusters_file;
    d.prometheus_timeout = c.prometheus_timeout;
    o.clusters = std::move(d);
  }
  LENS_RETURN_IF_ERROR(o.Validate());
  return o;
}

}  // namespace lens
