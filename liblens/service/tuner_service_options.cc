// lens-tuner's options from the config: the `tuner:` section, the token
// file read.
#include "service/service_host.h"
#include "service/tuner_service.h"

namespace lens {

Status TunerServiceOptions::Validate() const {
  LENS_RETURN_IF_ERROR(spec.Validate().WithContext("tuner"));
  if (interval < std::chrono::seconds(1)) {
    return InvalidArgumentError("tuner: interval: must be at least 1s");
  }
  LENS_RETURN_IF_ERROR(http.Validate().WithContext("http"));
  return OkStatus();
}

StatusOr<TunerServiceOptions> TunerServiceOptionsFromConfig(
    const Config& config) {
  const TunerOptions& c = config.tuner;
  LENS_RETURN_IF_ERROR(c.Validate().WithContext("tuner"));
  TunerServiceOptions o;
  o.spec = TuningSpecFromConfig(c);
  o.interval = c.interval;
  LENS_ASSIGN_OR_RETURN(
      o.http, service::ServiceHttpOptions("tuner", c.listen_address,
                                          c.bearer_token_file, c.tls_cert_file,
                                          c.tls_key_file));
  // Prometheus and a probe: nothing else talks to a node's tuner.
  o.http.threads = 1;
  // One address cannot take every slot from the scraper: a fraction each.
  o.http.max_connections = 256;
  o.http.max_connections_per_peer = 32;
  LENS_RETURN_IF_ERROR(o.Validate());
  return o;
}

}  // namespace lens
