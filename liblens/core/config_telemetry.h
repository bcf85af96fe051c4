// Decoder of the `telemetry:` config section (lens-telemetry).
#ifndef LENS_CORE_CONFIG_TELEMETRY_H_
#define LENS_CORE_CONFIG_TELEMETRY_H_

#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/config_decode.h"

namespace lens::config {

Status DecodeTelemetry(const Ctx& ctx, const YAML::Node& node,
                       const std::string& path, TelemetryConfigOptions* out);
std::vector<std::string_view> TelemetryKeys();

}  // namespace lens::config

#endif  // LENS_CORE_CONFIG_TELEMETRY_H_
