// Decoder of the `nodeExporter:` config section.
#ifndef LENS_CORE_CONFIG_NODE_EXPORTER_H_
#define LENS_CORE_CONFIG_NODE_EXPORTER_H_

#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/config_decode.h"

namespace lens::config {

Status DecodeNodeExporter(const Ctx& ctx, const YAML::Node& node,
                          const std::string& path, NodeExporterOptions* out);

// The section's keys (each can be set from the environment).
std::vector<std::string_view> NodeExporterKeys();

}  // namespace lens::config

#endif  // LENS_CORE_CONFIG_NODE_EXPORTER_H_
