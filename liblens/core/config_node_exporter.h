// Decoder of the `nodeExporter:` config section.
#ifndef LENS_CORE_CONFIG_NODE_EXPORTER_H_
#define LENS_CORE_CONFIG_NODE_EXPORTER_H_

#include "core/config_decode.h"
#include "lens/config.h"

namespace lens::config {

Status DecodeNodeExporter(const Ctx& ctx, const YAML::Node& node,
                          const std::string& path, NodeExporterOptions* out);

}  // namespace lens::config

#endif  // LENS_CORE_CONFIG_NODE_EXPORTER_H_
