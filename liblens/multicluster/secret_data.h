// Secrets as the API carries them: `data` values in base64, and the
// Secret lens-multicluster publishes.
#ifndef LENS_MULTICLUSTER_SECRET_DATA_H_
#define LENS_MULTICLUSTER_SECRET_DATA_H_

#include <map>
#include <string>
#include <string_view>

namespace lens::multicluster {

// A v1 Secret of type Opaque: `labels` on it, `data` base64-encoded, and
// metadata.resourceVersion when not empty (an update's precondition).
std::string SecretJson(std::string_view namespace_name, std::string_view name,
                       const std::map<std::string, std::string>& labels,
                       const std::map<std::string, std::string>& data,
                       std::string_view resource_version);

// metadata.resourceVersion of an object's JSON; "" when absent.
std::string ResourceVersionOf(std::string_view object_json);

}  // namespace lens::multicluster

#endif  // LENS_MULTICLUSTER_SECRET_DATA_H_
