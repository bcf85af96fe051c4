// The `api:` section: its keys, decoders and rules.
#include "api/config.h"

#include "core/config_decode.h"

namespace lens {
namespace config {
namespace {

using A = ApiConfigOptions;

constexpr FieldRule<A> kApiRules[] = {
    {"listen", FieldChecked<A, FieldText<A, &A::listen>>},
    {"bearerTokenFile", FieldText<A, &A::bearer_token_file>},
    {"tlsCertFile", FieldText<A, &A::tls_cert_file>},
    {"tlsKeyFile", FieldText<A, &A::tls_key_file>},
    {"cluster", FieldChecked<A, FieldText<A, &A::cluster>>},
    {"dashboard", FieldFlag<A, &A::dashboard>},
    {"prometheusUrl", FieldChecked<A, FieldText<A, &A::prometheus_url>>},
    {"prometheusTokenFile", FieldText<A, &A::prometheus_token_file>},
    {"prometheusCaFile", FieldText<A, &A::prometheus_ca_file>},
    {"prometheusTimeout",
     FieldChecked<A, FieldDuration<A, &A::prometheus_timeout>>},
    {"clustersFile", FieldText<A, &A::clusters_file>},
};

}  // namespace

constinit const SectionSpec<ApiConfigOptions> kApiSection{"api", kApiRules};

}  // namespace config

Status ApiConfigOptions::Validate() const {
  LENS_RETURN_IF_ERROR(
      config::ValidateListenAddress(listen, true).WithContext("listen"));
  if (cluster.empty())
    return InvalidArgumentError("cluster: must not be empty");
  if (cluster.size() > 253) {
    return InvalidArgumentError("cluster: at most 253 characters");
  }
  if (!prometheus_url.empty() && prometheus_url.rfind("http://", 0) != 0 &&
      prometheus_url.rfind("https://", 0) != 0) {
    return InvalidArgumentError(
        "prometheusUrl: want an http:// or https:// URL");
  }
  if (prometheus_timeout < std::chrono::milliseconds(100) ||
      prometheus_timeout > std::chrono::minutes(10)) {
    return InvalidArgumentError("prometheusTimeout: must be in 100ms..10m");
  }
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return InvalidArgumentError(
        "tlsCertFile: tlsCertFile and tlsKeyFile go together");
  }
  return OkStatus();
}

}  // namespace lens
