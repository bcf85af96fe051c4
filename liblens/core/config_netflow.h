// Decoder of the `netflow:` config section.
#ifndef LENS_CORE_CONFIG_NETFLOW_H_
#define LENS_CORE_CONFIG_NETFLOW_H_

#include "core/config_decode.h"
#include "lens/config.h"

namespace lens::config {

Status DecodeNetflow(const Ctx& ctx, const YAML::Node& node,
                     const std::string& path, NetflowOptions* out);

}  // namespace lens::config

#endif  // LENS_CORE_CONFIG_NETFLOW_H_
