// The rules of the `tuner:` section: which sysctls Lens may set and in what
// range, which pam_limits items and values. Shared by the section's decoder
// (errors located in the file), TunerOptions::Validate (structs built in
// code) and the tuner (values compared in canonical form).
#ifndef LENS_TUNER_SYSCTL_RULES_H_
#define LENS_TUNER_SYSCTL_RULES_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"
#include "tuner/config.h"

namespace lens::config {

bool IsKnownSysctl(std::string_view key);

// `value` of sysctl `key` in canonical form (integers without leading zeros
// or '+', several separated by one space), or InvalidArgument: "unknown key
// \"vm.max_map_cont\" (did you mean vm.max_map_count?); ..." or
// "vm.swappiness: must be in 0..200, got 300".
StatusOr<std::string> CanonicalSysctl(std::string_view key,
                                      std::string_view value);

// Checks one limit on its own and makes its value canonical ("unlimited"
// or a decimal integer); nofile may go up to `nofile_max`. Messages start
// with the limit's name: "nofile: ...", "@gpu memlock: ...".
Status CheckTunerLimit(TunerLimit* limit, int64_t nofile_max);
// The checks across canonical limits: one entry per (domain, soft|hard,
// item), soft <= hard.
Status CheckTunerLimitSet(const std::vector<TunerLimit>& limits);
// nofile's bound: fs.nr_open when `sysctls` raises it, else the kernel's
// default (1048576).
int64_t TunerNofileMax(const std::map<std::string, std::string>& sysctls);
// "soft", "hard", "both" (or limits.conf's "-").
StatusOr<TunerLimit::Type> ParseTunerLimitType(std::string_view text);

// Text helpers of the flag forms: blank-separated words; `s` without
// surrounding blanks; the non-empty comma-separated items, trimmed.
std::vector<std::string_view> SplitBlanks(std::string_view text);
std::string_view TrimBlanks(std::string_view s);
std::vector<std::string_view> SplitCommaItems(std::string_view text);

}  // namespace lens::config

#endif  // LENS_TUNER_SYSCTL_RULES_H_
