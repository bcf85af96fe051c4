// The `tuner:` section of the configuration file: lens-tuner (its rules:
// tuner/sysctl_rules.h). Owned here; registered in service/config.cc.
#ifndef LENS_TUNER_CONFIG_H_
#define LENS_TUNER_CONFIG_H_

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/config_section.h"
#include "lens/status.h"

namespace lens {

// One entry of `tuner.limits`: a pam_limits line (limits.conf(5)).
struct TunerLimit {
  enum class Type { kSoft, kHard, kBoth };
  // `domain`: a user, @group, %group, uid range or "*" (everyone).
  std::string domain = "*";
  // `type`: soft | hard | both (written as "-").
  Type type = Type::kBoth;
  // `item`: nofile | memlock | nproc | stack | core.
  std::string item;
  // `value`: a decimal integer (KiB for memlock, stack and core) or
  // "unlimited" (not for nofile).
  std::string value;
};

// "soft", "hard" or "both".
std::string_view TunerLimitTypeName(TunerLimit::Type type);

// `tuner:` section: lens-tuner, declarative kernel and limits tuning
// (docs/tuner.md).
struct TunerOptions {
  // `listenAddress`: host:port of /metrics and /healthz.
  std::string listen_address = "0.0.0.0:8995";
  // `interval`: how often the node is checked (and drift re-applied); >= 1s.
  std::chrono::milliseconds interval{30000};
  // `procRoot`, `etcRoot`: the host's /proc and /etc (e.g. /host/proc in a
  // container).
  std::string proc_root = "/proc";
  std::string etc_root = "/etc";
  // `persist`: also write <etcRoot>/sysctl.d/90-lens.conf so the sysctls
  // survive a reboot.
  bool persist = true;
  // `sysctls`: dotted key -> value; only keys of the known table
  // (docs/tuner.md), each within its range. Values are kept canonical
  // (integers as the kernel prints them, several separated by one space).
  // From a flag or variable: "key=value,key=value".
  std::map<std::string, std::string> sysctls;
  // `limits`: a list of {domain, type, item, value}; from a flag or
  // variable: comma-separated "item=value" or "domain type item value".
  std::vector<TunerLimit> limits;
  // `bearerTokenFile`: required on every route but /healthz.
  // `tlsCertFile`, `tlsKeyFile`: HTTPS.
  std::string bearer_token_file;
  std::string tls_cert_file;
  std::string tls_key_file;

  // InvalidArgument naming the key: "sysctls: unknown key \"vm.max_map_cont\"
  // (did you mean vm.max_map_count?)", "limits: nofile: ...".
  Status Validate() const;
};

namespace config {
extern const SectionSpec<TunerOptions> kTunerSection;
}  // namespace config

}  // namespace lens

#endif  // LENS_TUNER_CONFIG_H_
