// `lens`: the command-line entry point.
//
// `lens parse-log` runs here, in a program that links only the training
// parser and the C++ runtime: a few MB resident whatever the log and the
// output format, and no start-up cost from libraries it does not use. Every
// other command (and parse-log with --store) runs in `lens-platform`, which
// links all of liblens (gRPC, the store, the Kubernetes and container
// clients, eBPF): this program execs it with the same arguments, so users
// only ever type `lens`.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "cli_exit.h"
#include "commands.h"

#ifndef LENS_PLATFORM_RELDIR
#define LENS_PLATFORM_RELDIR "../libexec/lens"
#endif

namespace {

// True when this program runs the command itself.
bool RunsHere(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "parse-log") return false;
  for (int i = 2; i < argc; ++i) {
    std::string_view a(argv[i]);
    if (a == "--") break;
    if (a == "--store" || a.starts_with("--store=")) return false;
  }
  return true;
}

// This executable's directory ("" when /proc is unreadable).
std::string SelfDir() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "";
  std::string s(path, static_cast<size_t>(n));
  size_t slash = s.rfind('/');
  return slash == std::string::npos ? "" : s.substr(0, slash);
}

// Execs lens-platform: next to this program (a build tree) or in the
// installed libexec directory. Returns only on failure.
int ExecPlatform(char** argv) {
  const std::string dir = SelfDir();
  const std::string candidates[] = {
      dir + "/lens-platform", dir + "/" LENS_PLATFORM_RELDIR "/lens-platform"};
  int err = ENOENT;
  for (const std::string& path : candidates) {
    ::execv(path.c_str(), argv);
    if (errno != ENOENT) err = errno;
  }
  std::fprintf(stderr,
               "lens: cannot run lens-platform (every command but parse-log "
               "runs there): %s; looked in %s and %s\n",
               std::strerror(err), candidates[0].c_str(),
               candidates[1].c_str());
  return 127;
}

}  // namespace

int main(int argc, char** argv) {
  if (!RunsHere(argc, argv)) return ExecPlatform(argv);
  CLI::App app{"lens: GPU-cluster observability for AI/ML training"};
  app.require_subcommand(1);
  lens::cli::Command parse_log = lens::cli::AddParseLog(app, nullptr);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return lens::cli::UsageExit(app, e, "lens");
  }
  return lens::cli::FinishOutput(parse_log(), "lens");
}
