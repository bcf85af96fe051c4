// Subcommands of the `lens` CLI. Each registers its flags on the app and
// returns the function that runs it; CLI types stay in this folder.
#ifndef LENS_DAEMONS_LENS_COMMANDS_H_
#define LENS_DAEMONS_LENS_COMMANDS_H_

#include <CLI/CLI.hpp>
#include <functional>

namespace lens::cli {

// Returns the exit code of the command.
using Command = std::function<int()>;

Command AddParseLog(CLI::App& app);
Command AddDb(CLI::App& app);
Command AddProbe(CLI::App& app);
Command AddUp(CLI::App& app);
Command AddContainers(CLI::App& app);
Command AddFlows(CLI::App& app);

}  // namespace lens::cli

#endif  // LENS_DAEMONS_LENS_COMMANDS_H_
