// lens-tuner: declarative sysctls and pam limits on a node, checked every
// interval with drift re-applied. Flags and lifecycle only: the tuner
// service does the work.
#include <cstdio>

#include "cli_exit.h"
#include "core/process.h"
#include "flags.h"
#include "lens/log.h"
#include "lens/version.h"
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
  lens::BlockShutdownSignals();
  CLI::App app{"lens-tuner: declarative sysctls and limits for a node"};
  app.set_version_flag("--version", std::string(lens::Version()));
  lens::cli::ConfigFlags flags;
  flags.AddFile(app, "YAML config file (tuner section, logging)");
  flags.Add(app, lens::cli::kTunerFlags);
  flags.Add(app, lens::cli::kLoggingFlags);
  bool dry_run = false, once = false;
  app.add_flag("--dry-run", dry_run,
               "print what would change (\"sysctl vm.max_map_count: 65530 "
               "-> 262144\") and exit without writing");
  app.add_flag("--once", once, "apply once, print what changed, and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return lens::cli::UsageExit(app, e, "lens-tuner");
  }
  // Bad flags, config, token or TLS files: 2. A port that cannot be used,
  // anything else: 1.
  auto config = flags.Load();
  auto options = config.ok() ? lens::TunerServiceOptionsFromConfig(*config)
                             : config.status();
  if (!options.ok()) {
    std::fprintf(stderr, "lens-tuner: %s\n",
                 options.status().message().c_str());
    return 2;
  }
  lens::ConfigureLogging(
      {config->logging.level, config->logging.format, {}, {}});
  if (dry_run) return DryRun(options->spec);
  if (once) return Once(options->spec);
  auto service = lens::TunerService::Start(*options);
  if (!service.ok()) {
    return lens::cli::StartFailureExit(service.status(), "lens-tuner");
  }
  LENS_LOG(INFO)
          .Field("http", (*service)->http_url())
          .Field("proc", options->spec.proc_root)
          .Field("etc", options->spec.etc_root)
          .Field("sysctls", options->spec.sysctls.size())
          .Field("limits", options->spec.limits.size())
      << "lens-tuner checking";
  const int sig = lens::WaitForShutdownSignal();
  LENS_LOG(INFO).Field("signal", sig) << "lens-tuner stopping";
  (*service)->Stop();
  return 0;
}
