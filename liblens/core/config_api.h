// Decoder of the `api:` config section (lens-api).
#ifndef LENS_CORE_CONFIG_API_H_
#define LENS_CORE_CONFIG_API_H_

#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/config_decode.h"

namespace lens::config {

Status DecodeApi(const Ctx& ctx, const YAML::Node& node,
                 const std::string& path, ApiConfigOptions* out);
std::vector<std::string_view> ApiKeys();

}  // namespace lens::config

#endif  // LENS_CORE_CONFIG_API_H_
