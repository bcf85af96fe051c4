// `lens flows [--duration S] [--json] [--policy FILE]`: attaches the eBPF
// flow probe, watches this machine's TCP sockets for S seconds and prints
// each socket that moved data, opened or closed meanwhile.
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "lens/flow.h"

namespace lens::cli {
namespace {

std::string Endpoint(const IpAddress& a, uint16_t port) {
  IpAddress u = a.Unmapped();
  std::string text = u.ToString();
  if (u.family == 6) text = "[" + text + "]";
  return text + ":" + std::to_string(port);
}

void PrintTable(const std::vector<TcpFlow>& flows) {
  std::printf("%-24s %-24s %12s %12s %6s %9s %-9s %-8s %s\n", "LOCAL", "REMOTE",
              "SENT", "RECEIVED", "RETX", "RTT_US", "CLASS", "DIR", "PROCESS");
  for (const TcpFlow& f : flows) {
    std::string process =
        f.pid ? f.comm + "[" + std::to_string(f.pid) + "]" : "-";
    std::printf(
        "%-24s %-24s %12" PRIu64 " %12" PRIu64 " %6" PRIu64
        " %9.0f %-9s %-8s %s\n",
        Endpoint(f.saddr, f.sport).c_str(), Endpoint(f.daddr, f.dport).c_str(),
        f.bytes_sent, f.bytes_received, f.retransmits, f.MeanRttUs(),
        std::string(FlowClassName(f.remote_class)).c_str(),
        std::string(FlowDirectionName(f.direction)).c_str(), process.c_str());
  }
}

}  // namespace

Command AddFlows(CLI::App& app) {
  struct Options {
    double duration_seconds = 10;
    bool json = false;
    std::string policy;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "flows", "Watch this machine's TCP flows with eBPF (needs root)");
  cmd->add_option("--duration", o->duration_seconds, "seconds to watch")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, R"(print {"flows":[...]})");
  cmd->add_option("--policy", o->policy,
                  "endpoint classes (YAML); default: private ranges");
  return [o]() {
    FlowWatchOptions watch;
    if (!o->policy.empty()) {
      StatusOr<FlowPolicy> policy = LoadFlowPolicy(o->policy);
      if (!policy.ok()) {
        std::fprintf(stderr, "lens flows: --policy: %s\n",
                     policy.status().message().c_str());
        return 2;
      }
      watch.policy = std::move(*policy);
    }
    watch.on_attached = [o] {
      std::fprintf(stderr, "lens flows: watching TCP for %g s...\n",
                   o->duration_seconds);
    };
    auto flows = WatchFlows(std::chrono::milliseconds(static_cast<int64_t>(
                                o->duration_seconds * 1000)),
                            watch);
    if (!flows.ok()) {
      std::fprintf(stderr, "lens flows: %s\n",
                   flows.status().message().c_str());
      return 1;
    }
    if (o->json) {
      std::printf("%s\n", FlowsJson(*flows).c_str());
    } else {
      PrintTable(*flows);
    }
    return 0;
  };
}

}  // namespace lens::cli
