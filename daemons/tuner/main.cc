// lens-tuner: declarative sysctls and pam limits on a node, checked every
// interval with drift re-applied. Flags and lifecycle only: the tuner
// service does the work.
#include <cstdio>

#include "flags.h"
#include "run_daemon.h"
#include "service/tuner_service.h"

namespace {

// --dry-run: each change on its own line, nothing written. 1 when a
// setting cannot be read (the plan is incomplete).
int DryRun(const lens::TuningSpec& spec) {
  auto plan = lens::PlanTuning(spec);
  if (!plan.ok()) {
    std::fprintf(stderr, "lens-tuner: %s\n", plan.status().message().c_str());
    return 2;
  }
  int code = 0;
  for (const lens::TuningSetting& s : plan->settings) {
    if (s.in_sync) continue;
    std::printf("%s\n", lens::FormatTuningChange(s).c_str());
    if (!s.error.empty()) code = 1;
  }
  if (plan->changes() == 0) std::printf("no changes\n");
  return lens::cli::FinishOutput(code, "lens-tuner");
}

// --once: apply what differs, say what was done, exit. 1 on any error.
int Once(const lens::TuningSpec& spec) {
  auto plan = lens::PlanTuning(spec);
  if (!plan.ok()) {
    std::fprintf(stderr, "lens-tuner: %s\n", plan.status().message().c_str());
    return 2;
  }
  int code = 0;
  for (const lens::TuningSetting& s : plan->settings) {
    if (!s.in_sync && !s.error.empty()) {
      std::fprintf(stderr, "lens-tuner: %s\n",
                   lens::FormatTuningChange(s).c_str());
      code = 1;
    }
  }
  for (const lens::TuningOutcome& o : lens::ApplyTuning(spec, *plan)) {
    if (o.status.ok()) {
      std::printf("%s\n", lens::FormatTuningChange(o.setting).c_str());
    } else {
      std::fprintf(stderr, "lens-tuner: %s\n", o.status.message().c_str());
      code = 1;
    }
  }
  return lens::cli::FinishOutput(code, "lens-tuner");
}

}  // namespace

int main(int argc, char** argv) {
  using lens::TunerService;
  using lens::TunerServiceOptions;
  bool dry_run = false, once = false;
  // Bad flags, config, token or TLS files: 2. A port that cannot be used,
  // anything else: 1.
  return lens::cli::RunDaemon<TunerServiceOptions, TunerService>(
      argc, argv,
      {.name = "lens-tuner",
       .about = "lens-tuner: declarative sysctls and limits for a node",
       .config_help = "YAML config file (tuner section, logging)",
       .flags = {lens::cli::kTunerFlags},
       .options = lens::TunerServiceOptionsFromConfig,
       .describe =
           [](lens::LogMessage& line, const lens::Config&,
              const TunerServiceOptions& o, TunerService& s) {
             line.Field("http", s.http_url())
                 .Field("proc", o.spec.proc_root)
                 .Field("etc", o.spec.etc_root)
                 .Field("sysctls", o.spec.sysctls.size())
                 .Field("limits", o.spec.limits.size());
           },
       .running = "checking",
       .extra_flags =
           [&](CLI::App& app) {
             app.add_flag("--dry-run", dry_run,
                          "print what would change (\"sysctl "
                          "vm.max_map_count: 65530 -> 262144\") and exit "
                          "without writing");
             app.add_flag("--once", once,
                          "apply once, print what changed, and exit");
           },
       .instead = [&](const TunerServiceOptions& o) -> std::optional<int> {
         if (dry_run) return DryRun(o.spec);
         if (once) return Once(o.spec);
         return std::nullopt;
       }});
}
