// What the dashboard test serves: a store seeded through its own API with
// recognisable names and numbers (the pages must show them), and its sample
// history with the series the time-series routes read (GPU utilisation,
// memory, power and temperature per GPU, TCP flow counters), as lens up's
// local scrape or lens-telemetry would write them.
#ifndef LENS_TEST_WEB_DASHBOARD_ENV_H_
#define LENS_TEST_WEB_DASHBOARD_ENV_H_

#include <cstdint>

#include "lens/store.h"

namespace lens::test {

inline constexpr char kAlpha[] = "gpu-node-alpha";  // Ready, 8 x MI300X
inline constexpr char kBravo[] = "gpu-node-bravo";  // NotReady, 4 x H100
inline constexpr char kLlamaUid[] = "6f1c2d3e-0a4b-4c5d-8e9f-1122334455aa";
inline constexpr char kBertUid[] = "9a8b7c6d-5e4f-4a3b-9c2d-66778899bbcc";
// A container image that must appear as text, never as markup.
inline constexpr char kHostileImage[] = "registry.local/evil<b>bold</b>:1";

// Training records of the llama workload: run 1 is iterations 1..20 (with
// checkpoints at 10 and 20), run 2 (a restart) 21..30. Their values:
inline double LossAt(int64_t i) { return 3.0 - 0.05 * double(i); }
inline double TflopsAt(int64_t i) { return 180.0 + double(i); }
inline double TokensAt(int64_t i) { return 4000.0 + 10.0 * double(i); }
inline double StepMsAt(int64_t i) { return 1500.0 + double(i); }
inline constexpr int64_t kRun1Last = 20;
inline constexpr int64_t kRun2Last = 30;

// Nodes, GPUs, RDMA, containers, pods, workloads, GPU allocation history and
// training data, timed relative to `now_s` (Unix seconds) so the dashboard's
// default range (the last hour) holds them. Fails the test on error.
void SeedDashboardStore(Store& store, int64_t now_s);

// The last 65 minutes of series, every 30 s: alpha's 8 GPUs (GPU 0 at
// 62%, 150 GiB, 612 W, 71 °C for the last 3 minutes), bravo's 4 GPUs at
// 25% for the last half hour; flows of the llama workload on alpha at
// 1.25 GB/s out and 1.18 GB/s in with 0.5 and 0.25 retransmits/s, host
// traffic on bravo at 2048 B/s, and two remotes.
void SeedSeries(Store& store, int64_t now_s);

}  // namespace lens::test

#endif  // LENS_TEST_WEB_DASHBOARD_ENV_H_
