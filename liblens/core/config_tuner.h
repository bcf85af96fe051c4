// Decoder of the `tuner:` config section (lens-tuner).
#ifndef LENS_CORE_CONFIG_TUNER_H_
#define LENS_CORE_CONFIG_TUNER_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/config_decode.h"

namespace lens::config {

Status DecodeTuner(const Ctx& ctx, const YAML::Node& node,
                   const std::string& path, TunerOptions* out);
std::vector<std::string_view> TunerKeys();

}  // namespace lens::config

#endif  // LENS_CORE_CONFIG_TUNER_H_
