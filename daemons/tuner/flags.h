// The flags of lens-tuner as config keys (`tuner:`); defaults are the
// config's (docs/tuner.md).
#ifndef LENS_DAEMONS_TUNER_FLAGS_H_
#define LENS_DAEMONS_TUNER_FLAGS_H_

#include "config_flags.h"

namespace lens::cli {

inline constexpr ConfigFlag kTunerFlags[] = {
    {"--listen", "tuner.listenAddress", ConfigFlag::kText,
     "host:port of /metrics and /healthz (default 0.0.0.0:8995; port 0 "
     "picks a free one)"},
    {"--interval", "tuner.interval", ConfigFlag::kSeconds,
     "seconds between checks (default 30; at least 1)"},
    {"--proc-root", "tuner.procRoot", ConfigFlag::kText,
     "host /proc (default /proc)"},
    {"--etc-root", "tuner.etcRoot", ConfigFlag::kText,
     "host /etc (default /etc)"},
    {"--no-persist", "tuner.persist", ConfigFlag::kSetFalse,
     "do not write <etc>/sysctl.d/90-lens.conf (sysctls then last until "
     "the next reboot)"},
    {"--sysctls", "tuner.sysctls", ConfigFlag::kText,
     "the sysctls, replacing the config's: key=value,... (e.g. "
     "vm.max_map_count=262144)"},
    {"--limits", "tuner.limits", ConfigFlag::kText,
     "the pam limits, replacing the config's: item=value or \"domain "
     "soft|hard|both item value\", comma-separated (e.g. nofile=131072)"},
    {"--bearer-token-file", "tuner.bearerTokenFile", ConfigFlag::kText,
     "require this bearer token on /metrics"},
    {"--tls-cert", "tuner.tlsCertFile", ConfigFlag::kText,
     "serve HTTPS with this PEM certificate"},
    {"--tls-key", "tuner.tlsKeyFile", ConfigFlag::kText,
     "PEM private key of --tls-cert"},
};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_TUNER_FLAGS_H_
