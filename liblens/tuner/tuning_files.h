// The files lens-tuner owns under the etc root, their content rendered from
// the spec and read back, and how they and the sysctls are written.
#ifndef LENS_TUNER_TUNING_FILES_H_
#define LENS_TUNER_TUNING_FILES_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"
#include "tuner/config.h"

namespace lens::tuner {

// Under the etc root. "90-" sorts after the distribution's files, so ours
// win where both set a key.
inline constexpr std::string_view kSysctlFile = "sysctl.d/90-lens.conf";
inline constexpr std::string_view kLimitsFile =
    "security/limits.d/90-lens.conf";

// <proc>/sys/vm/max_map_count for "vm.max_map_count".
std::string SysctlPath(const std::string& proc_root, std::string_view key);

// The files' content; empty when there is nothing to set (the file should
// not exist).
std::string RenderSysctlFile(const std::map<std::string, std::string>& sysctls);
std::string RenderLimitsFile(const std::vector<TunerLimit>& limits);

// A limit's key in plans and metrics: "nofile", "@gpu memlock/hard".
std::string LimitKey(const TunerLimit& limit);
// The limits in a limits.conf text by LimitKey ("-" read as both); comments,
// blank and malformed lines are skipped.
std::map<std::string, std::string> ParseLimitsFile(std::string_view text);

// `text`'s blank-separated words joined by one space (the kernel separates
// a vector sysctl's values with tabs).
std::string NormalizeBlanks(std::string_view text);

// The whole file, or nullopt when it does not exist. Errors name the path.
StatusOr<std::optional<std::string>> ReadOptionalFile(const std::string& path);
// Replaces `path` with `content` atomically: a temporary file beside it,
// written, fsynced and renamed over it (readers never see half a file), mode
// 0644, the directory created when missing.
Status WriteFileAtomically(const std::string& path, std::string_view content);
// Removes `path`; absent already is fine.
Status RemoveFile(const std::string& path);
// Writes `value` to a sysctl file as one write (as `sysctl -w` does).
Status WriteSysctl(const std::string& path, std::string_view value);

}  // namespace lens::tuner

#endif  // LENS_TUNER_TUNING_FILES_H_
