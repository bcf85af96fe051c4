// A workload's goodput (where its GPU time went) and the health of the
// devices on the nodes it ran on, from the store.
//   workload_report <store-url> <workload-uid>
#include <chrono>
#include <cstdio>
#include <set>
#include <string>

#include "lens/insights.h"
#include "lens/insights_health.h"
#include "lens/store.h"
#include "lens/timeseries.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: workload_report STORE_URL WORKLOAD\n");
    return 2;
  }
  auto store = lens::Store::Open(argv[1]);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  auto job = (*store)->pods().GetWorkload(argv[2]);
  if (!job.ok()) {
    std::fprintf(stderr, "%s\n", job.status().ToString().c_str());
    return 1;
  }
  const auto now = std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
  const lens::Timestamp end = job->ended_at.value_or(now);

  auto input = lens::ReadGoodputInput(**store, argv[2], end);
  if (!input.ok()) return 1;
  auto goodput = lens::ComputeGoodput(*input);
  if (!goodput.ok()) {
    std::fprintf(stderr, "%s\n", goodput.status().ToString().c_str());
    return 1;
  }
  const lens::GoodputBreakdown& t = goodput->total;
  std::printf("%s %s: goodput %.1f%% of %.0f s, %d restart(s)\n",
              job->kind.c_str(), job->name.c_str(), 100 * t.goodput, t.wall_s,
              goodput->restarts);
  std::printf(
      "  scheduling %.0f s, startup %.0f s, productive %.0f s, "
      "checkpoints %.0f s, restarts %.0f s, idle %.0f s\n",
      t.scheduling_s, t.startup_s, t.productive_s, t.checkpoint_s, t.restart_s,
      t.idle_s);

  // The device health series of the workload's nodes over its lifetime, from
  // the store's sample history (with a Prometheus-compatible server, use
  // lens::NewPromQlSource instead).
  auto pods = (*store)->pods().ListWorkloadPods(argv[2]);
  if (!pods.ok()) {
    std::fprintf(stderr, "%s\n", pods.status().ToString().c_str());
    return 1;
  }
  std::set<std::string> nodes;
  for (const lens::PodRecord& pod : *pods) nodes.insert(pod.node);
  auto series = lens::NewSampleHistorySource(store->get());
  auto health = lens::ReadDeviceHealthHistory(*series, job->created_at, end,
                                              std::chrono::minutes(1));
  if (!health.ok()) {
    std::fprintf(stderr, "%s\n", health.status().ToString().c_str());
    return 1;
  }
  for (const lens::DeviceHealthChange& c : health->changes) {
    if (!nodes.contains(c.node)) continue;
    std::printf("  %s gpu %s: %s -> %s\n", c.node.c_str(), c.device.c_str(),
                std::string(lens::DeviceHealthName(c.from)).c_str(),
                std::string(lens::DeviceHealthName(c.to)).c_str());
  }
  return 0;
}
