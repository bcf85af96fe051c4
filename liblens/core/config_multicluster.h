// Decoder of the `multiCluster:` config section (lens-multicluster).
#ifndef LENS_CORE_CONFIG_MULTICLUSTER_H_
#define LENS_CORE_CONFIG_MULTICLUSTER_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/config_decode.h"

namespace lens::config {

Status DecodeMultiCluster(const Ctx& ctx, const YAML::Node& node,
                          const std::string& path, MultiClusterOptions* out);
std::vector<std::string_view> MultiClusterKeys();

}  // namespace lens::config

#endif  // LENS_CORE_CONFIG_MULTICLUSTER_H_
