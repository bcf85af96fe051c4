// Decoder of the `netflow:` config section.
#ifndef LENS_CORE_CONFIG_NETFLOW_H_
#define LENS_CORE_CONFIG_NETFLOW_H_

#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/config_decode.h"

namespace lens::config {

Status DecodeNetflow(const Ctx& ctx, const YAML::Node& node,
                     const std::string& path, NetflowOptions* out);

// The section's keys (each can be set from the environment).
std::vector<std::string_view> NetflowKeys();

}  // namespace lens::config

#endif  // LENS_CORE_CONFIG_NETFLOW_H_
