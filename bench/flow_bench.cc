// Userspace hot paths of TCP flow analysis (no BPF needed):
//   BM_Classify        longest-prefix classification of one address
//   BM_MonitorDrain    one drain's processing in FlowMonitor (classification,
//                      direction, metric update) for 10,000 sockets
//   BM_RenderMetrics   /metrics of a monitor that has seen 200 workloads
#include <benchmark/benchmark.h>

#include <deque>
#include <string>
#include <vector>

#include "lens/flow.h"

namespace {

using lens::FlowClassifier;
using lens::FlowPolicy;
using lens::IpAddress;
using lens::TcpFlow;

// A realistic policy: ~50 CIDRs over all classes, both families.
FlowPolicy Policy() {
  FlowPolicy p = lens::DefaultFlowPolicy();
  p.resolv_conf.clear();
  for (int i = 0; i < 16; ++i) {
    p.k8s_pod.push_back("10.244." + std::to_string(i * 16) + ".0/20");
    p.internal_hosts.push_back("192.168." + std::to_string(i) + ".0/24");
    p.k8s_pod.push_back("fd00:10:244:" + std::to_string(i) + "::/64");
  }
  p.k8s_svc = {"10.96.0.0/12", "fd00:10:96::/112"};
  p.dns = {"10.96.0.10", "fd00:10:96::a"};
  return p;
}

std::vector<IpAddress> Addresses(bool v6) {
  std::vector<IpAddress> out;
  for (int i = 0; i < 1024; ++i) {
    std::string text =
        v6 ? "fd00:10:244:" + std::to_string(i % 20) + "::" + std::to_string(i)
           : "10." + std::to_string((i * 7) % 256) + "." +
                 std::to_string(i % 256) + "." + std::to_string(i % 200);
    out.push_back(*IpAddress::Parse(text));
  }
  return out;
}

void BM_Classify(benchmark::State& state) {
  auto classifier = FlowClassifier::Create(Policy());
  if (!classifier.ok()) return state.SkipWithError("policy");
  const std::vector<IpAddress> addrs = Addresses(state.range(0) == 6);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize((*classifier)->Classify(addrs[i++ & 1023]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Classify)->Arg(4)->Arg(6);

// The same drain over and over.
class RepeatSource : public lens::FlowSource {
 public:
  explicit RepeatSource(std::vector<TcpFlow> flows)
      : flows_(std::move(flows)) {}
  lens::StatusOr<std::vector<TcpFlow>> Drain() override { return flows_; }

 private:
  std::vector<TcpFlow> flows_;
};

std::vector<TcpFlow> Flows(int n, int workloads) {
  std::vector<TcpFlow> flows;
  const std::vector<IpAddress> remotes = Addresses(false);
  for (int i = 0; i < n; ++i) {
    TcpFlow f;
    f.saddr = *IpAddress::Parse("10.0.0.5");
    f.sport = static_cast<uint16_t>(30000 + i % 30000);
    f.daddr = remotes[i % remotes.size()];
    f.dport = 443;
    f.role = i % 3 ? lens::FlowRole::kActive : lens::FlowRole::kUnknown;
    f.bytes_sent = 1000 + i;
    f.bytes_received = 500;
    f.rtt_count = 4;
    f.rtt_sum_us = 400;
    f.rtt_histogram[6] = 4;
    f.pod_namespace = "ns";
    f.pod_name = "pod-" + std::to_string(i % workloads);
    flows.push_back(std::move(f));
  }
  return flows;
}

lens::FlowMonitorOptions MonitorOptions() {
  lens::FlowMonitorOptions o;
  o.policy = Policy();
  o.proc_root = "/nonexistent";  // no listener table: direction from roles
  return o;
}

void BM_MonitorDrain(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto monitor = lens::FlowMonitor::Create(
      std::make_unique<RepeatSource>(Flows(n, 200)), MonitorOptions());
  if (!monitor.ok()) return state.SkipWithError("monitor");
  for (auto _ : state) {
    if (!(*monitor)->DrainOnce().ok()) return state.SkipWithError("drain");
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_MonitorDrain)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_RenderMetrics(benchmark::State& state) {
  auto monitor = lens::FlowMonitor::Create(
      std::make_unique<RepeatSource>(Flows(10000, 200)), MonitorOptions());
  if (!monitor.ok() || !(*monitor)->DrainOnce().ok()) {
    return state.SkipWithError("monitor");
  }
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = (*monitor)->RenderMetrics();
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_RenderMetrics)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
