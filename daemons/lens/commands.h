// Subcommands of the `lens` CLI. Each registers its flags on the app and
// returns the function that runs it; CLI types stay in this folder.
//
// Two programs share them: `lens` runs `parse-log` itself, linking only the
// training parser, and execs `lens-platform` (every command) for the rest
// (see front.cc).
#ifndef LENS_DAEMONS_LENS_COMMANDS_H_
#define LENS_DAEMONS_LENS_COMMANDS_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "lens/status.h"
#include "lens/store.h"

namespace lens::cli {

// Returns the exit code of the command.
using Command = std::function<int()>;

// "2026-11-20T06:02:11Z", or "-" for no time (or a zero one).
std::string FormatTime(const std::optional<Timestamp>& t);

// Where `lens parse-log --store URL` writes: one writer per input.
class ParseLogSink {
 public:
  virtual ~ParseLogSink() = default;
  // Starts the next input; `source` names it for run identity.
  virtual Status Begin(const std::string& workload,
                       const std::string& source) = 0;
  virtual Status Write(const TrainingBatch& batch) = 0;
  // What the store is, for messages ("sqlite:///..." without secrets).
  virtual std::string target() const = 0;
};
// Opens the sink for --store URL. Null where the program cannot store.
using ParseLogSinkOpener =
    StatusOr<std::unique_ptr<ParseLogSink>> (*)(const std::string& url);

Command AddParseLog(CLI::App& app, ParseLogSinkOpener open_sink);
StatusOr<std::unique_ptr<ParseLogSink>> OpenStoreSink(const std::string& url);

Command AddDb(CLI::App& app);
Command AddProbe(CLI::App& app);
Command AddUp(CLI::App& app);
Command AddContainers(CLI::App& app);
Command AddFlows(CLI::App& app);
Command AddWorkloads(CLI::App& app);

}  // namespace lens::cli

#endif  // LENS_DAEMONS_LENS_COMMANDS_H_
