// Declarative node tuning (docs/tuner.md): the sysctls and pam limits a
// node should have, compared with what it has under a /proc and an /etc
// root, and applied idempotently.
//
//   lens::TuningSpec spec;
//   spec.sysctls = {{"vm.max_map_count", "262144"}};
//   spec.limits = {{.item = "nofile", .value = "131072"}};
//   auto plan = lens::PlanTuning(spec);          // reads only
//   for (const auto& s : plan->settings)
//     if (!s.in_sync) puts(lens::FormatTuningChange(s).c_str());
//   auto outcomes = lens::ApplyTuning(spec, *plan);  // writes what differs
//
// What is written:
//   <proc>/sys/<key with '.' as '/'>            each sysctl that differs
//   <etc>/sysctl.d/90-lens.conf                 the sysctls (spec.persist)
//   <etc>/security/limits.d/90-lens.conf        the limits
// Files are replaced atomically (temporary file, fsync, rename) and only
// when their content differs, so a second apply changes nothing; an empty
// list removes its file. No other file is touched. Sysctls that leave the
// spec keep their current value (the tuner does not know the old one).
#ifndef LENS_TUNER_TUNER_H_
#define LENS_TUNER_TUNER_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"
#include "tuner/config.h"

namespace lens {

// What a node should look like. Plain value.
struct TuningSpec {
  // The host's /proc and /etc (absolute; fixture trees in tests).
  std::string proc_root = "/proc";
  std::string etc_root = "/etc";
  // Also keep <etc>/sysctl.d/90-lens.conf, so the sysctls survive a reboot.
  bool persist = true;
  // Dotted key -> value, checked like the config's `tuner.sysctls`.
  std::map<std::string, std::string> sysctls;
  std::vector<TunerLimit> limits;

  // InvalidArgument naming the field (the config's messages: unknown
  // sysctls with a hint, values out of range with the range).
  Status Validate() const;
};

// From the config's `tuner:` section.
TuningSpec TuningSpecFromConfig(const TunerOptions& options);

enum class TuningKind {
  kSysctl,  // a live value under <proc>/sys
  kLimit,   // one line of the limits file
  kFile,    // one of the two files as a whole
};
// "sysctl", "limits", "file" (metric labels, --dry-run's lines).
std::string_view TuningKindName(TuningKind kind);

// One setting, desired against found.
struct TuningSetting {
  TuningKind kind = TuningKind::kSysctl;
  // kSysctl: "vm.max_map_count"; kLimit: the item, prefixed by the domain
  // unless "*" and followed by "/soft" or "/hard" unless both ("nofile",
  // "@gpu memlock/hard"); kFile: the path under the etc root
  // ("sysctl.d/90-lens.conf").
  std::string key;
  // Canonical values. For a file: a summary ("2 lines", "absent").
  std::string desired;
  std::string found;  // "absent" when there is nothing
  bool in_sync = false;
  // Why the found value could not be read (the setting counts as out of
  // sync and is not written); empty otherwise.
  std::string error;
};

struct TuningPlan {
  // Sysctls in key order, then limits in spec order, then the files.
  std::vector<TuningSetting> settings;
  // Settings out of sync (including unreadable ones).
  size_t changes() const;
};

// Reads the node under the roots and compares. Never writes. Errors:
// InvalidArgument (the spec); a setting that cannot be read is reported in
// its `error`, not as a failure of the plan.
StatusOr<TuningPlan> PlanTuning(const TuningSpec& spec);

// The outcome of applying one out-of-sync setting.
struct TuningOutcome {
  TuningSetting setting;
  Status status;  // the write's error, naming the path
};

// Writes the settings of `plan` (from PlanTuning(spec)) that are out of
// sync and readable; limits are written with their file. A sysctl the
// kernel reads back differently (it clamps some) is an error. Not
// thread-safe against another apply on the same roots.
std::vector<TuningOutcome> ApplyTuning(const TuningSpec& spec,
                                       const TuningPlan& plan);

// "sysctl vm.max_map_count: 65530 -> 262144", "limits nofile: absent ->
// 131072", "file sysctl.d/90-lens.conf: absent -> 1 line"; an unreadable
// setting: "sysctl fs.nr_open: cannot read: ...".
std::string FormatTuningChange(const TuningSetting& setting);

}  // namespace lens

#endif  // LENS_TUNER_TUNER_H_
