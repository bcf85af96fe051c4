// `lens-platform`: every `lens` command (`lens` execs it for all but
// parse-log; see front.cc). Flags only; the work is done by liblens.
#include <cstdio>

#include "cli_exit.h"
#include "commands.h"
#include "lens/version.h"

int main(int argc, char** argv) {
  CLI::App app{"lens: GPU-cluster observability for AI/ML training"};
  app.set_version_flag("--version", std::string(lens::Version()));
  app.require_subcommand(1);
  lens::cli::Command parse_log =
      lens::cli::AddParseLog(app, lens::cli::OpenStoreSink);
  lens::cli::Command db = lens::cli::AddDb(app);
  lens::cli::Command probe = lens::cli::AddProbe(app);
  lens::cli::Command up = lens::cli::AddUp(app);
  lens::cli::Command containers = lens::cli::AddContainers(app);
  lens::cli::Command flows = lens::cli::AddFlows(app);
  lens::cli::Command workloads = lens::cli::AddWorkloads(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return lens::cli::UsageExit(app, e, "lens");
  }
  int code = 2;
  if (app.got_subcommand("parse-log")) code = parse_log();
  if (app.got_subcommand("db")) code = db();
  if (app.got_subcommand("probe")) code = probe();
  if (app.got_subcommand("up")) code = up();
  if (app.got_subcommand("containers")) code = containers();
  if (app.got_subcommand("flows")) code = flows();
  if (app.got_subcommand("workloads")) code = workloads();
  return lens::cli::FinishOutput(code, "lens");
}
