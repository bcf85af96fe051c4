// One daemon's life, written once for every main: its flags as config
// overrides (plus --config, --log-level and --version), the config, the
// service's options from it, logging, the service started, one line saying
// it runs, the shutdown signal, an ordered stop. A main declares what
// differs (its name, flag table, options and service) and calls RunDaemon.
//
// Exit codes (cli_exit.h): 0 after a shutdown signal; 2 for bad flags or
// config (naming the key); a start failure as the daemon's `start_exit` says
// (by default 2 for what the operator must fix, 1 for anything else).
#ifndef LENS_DAEMONS_COMMON_RUN_DAEMON_H_
#define LENS_DAEMONS_COMMON_RUN_DAEMON_H_

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli_exit.h"
#include "config_flags.h"
#include "core/process.h"
#include "lens/log.h"
#include "lens/status.h"
#include "lens/version.h"
#include "service/config.h"

namespace lens::cli {

template <typename Options, typename Service>
struct Daemon {
  const char* name;         // "lens-api": messages and the log
  const char* about;        // the first line of --help
  const char* config_help;  // what --config holds
  std::vector<std::span<const ConfigFlag>> flags;
  std::function<StatusOr<Options>(const Config&)> options;
  // Service::Start(options) unless set.
  std::function<StatusOr<std::unique_ptr<Service>>(const Options&)> start;
  // The fields of the line that says the daemon runs ("<name> <running>").
  std::function<void(LogMessage&, const Config&, const Options&, Service&)>
      describe;
  const char* running = "serving";
  // The exit code of a start failure (after "<name>: <message>" on stderr).
  int (*start_exit)(const Status&, const char* name) = &StartFailureExit;
  // Flags of this daemon's own that are not config keys (the tuner's
  // --dry-run), and what runs instead of the service when one is given:
  // an exit code, or nothing to start the service.
  std::function<void(CLI::App&)> extra_flags;
  std::function<std::optional<int>(const Options&)> instead;
};

template <typename Options, typename Service>
int RunDaemon(int argc, char** argv, const Daemon<Options, Service>& d) {
  BlockShutdownSignals();
  CLI::App app{d.about};
  app.set_version_flag("--version", std::string(Version()));
  ConfigFlags flags;
  flags.AddFile(app, d.config_help);
  for (std::span<const ConfigFlag> table : d.flags) flags.Add(app, table);
  flags.Add(app, kLoggingFlags);
  if (d.extra_flags) d.extra_flags(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageExit(app, e, d.name);
  }
  auto config = flags.Load();
  auto options = config.ok() ? d.options(*config) : config.status();
  if (!options.ok()) {
    std::fprintf(stderr, "%s: %s\n", d.name,
                 options.status().message().c_str());
    return 2;
  }
  ConfigureLogging({config->logging.level, config->logging.format, {}, {}});
  if (d.instead) {
    if (std::optional<int> code = d.instead(*options)) return *code;
  }
  auto service = d.start ? d.start(*options) : Service::Start(*options);
  if (!service.ok()) return d.start_exit(service.status(), d.name);
  if (LogEnabled(LogLevel::kInfo)) {
    LogMessage line(LogLevel::kInfo);
    if (d.describe) d.describe(line, *config, *options, **service);
    line << d.name << " " << d.running;
  }
  const int sig = WaitForShutdownSignal();
  LENS_LOG(INFO).Field("signal", sig) << d.name << " stopping";
  (*service)->Stop();
  return 0;
}

}  // namespace lens::cli

#endif  // LENS_DAEMONS_COMMON_RUN_DAEMON_H_
