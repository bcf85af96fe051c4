// Decoders of the cluster daemons' config sections: `jobs:`, `controller:`
// and `database:`.
#ifndef LENS_CORE_CONFIG_JOBS_H_
#define LENS_CORE_CONFIG_JOBS_H_

#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/config_decode.h"

namespace lens::config {

Status DecodeJobs(const Ctx& ctx, const YAML::Node& node,
                  const std::string& path, JobsOptions* out);
Status DecodeController(const Ctx& ctx, const YAML::Node& node,
                        const std::string& path, ControllerConfigOptions* out);
Status DecodeDatabase(const Ctx& ctx, const YAML::Node& node,
                      const std::string& path, DatabaseOptions* out);
std::vector<std::string_view> JobsKeys();
std::vector<std::string_view> ControllerKeys();
std::vector<std::string_view> DatabaseKeys();

}  // namespace lens::config

#endif  // LENS_CORE_CONFIG_JOBS_H_
