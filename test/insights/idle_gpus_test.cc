// Idle allocated GPUs on scripted histories: 30 s samples of one or more
// GPUs, holders with start and end, answers worked out by hand below each
// history. Then the readers against a real SQLite store and its sample
// history.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "lens/insights.h"
#include "lens/store.h"
#include "lens/timeseries.h"

namespace lens {
namespace {

constexpr int64_t kT0Ms = 1764000000000;  // 2025-11-24 16:00:00 UTC
constexpr int64_t kMin = 60'000;          // ms

Timestamp AtMs(int64_t ms) { return Timestamp(std::chrono::milliseconds(ms)); }

// Samples every 30 s in [from, to) (minutes after T0), value by minute.
std::vector<SamplePoint> Samples(double from_min, double to_min,
                                 const std::function<double(double)>& value) {
  std::vector<SamplePoint> out;
  for (int64_t ms = kT0Ms + static_cast<int64_t>(from_min * kMin);
       ms < kT0Ms + static_cast<int64_t>(to_min * kMin); ms += 30'000) {
    out.push_back({ms, value(static_cast<double>(ms - kT0Ms) / kMin)});
  }
  return out;
}

GpuHolding Holder(std::string pod, std::string workload, double from_min,
                  std::optional<double> to_min, std::string gpu = "0") {
  GpuHolding h;
  h.node = "node-a";
  h.gpu = std::move(gpu);
  h.serial = "S" + h.gpu;
  h.container_id = "c-" + pod;
  h.pod_uid = "uid-" + pod;
  h.pod_name = pod;
  h.namespace_name = "ml";
  h.workload_uid = workload.empty() ? "" : "w-" + workload;
  h.workload_name = workload;
  h.from = AtMs(kT0Ms + static_cast<int64_t>(from_min * kMin));
  if (to_min) h.to = AtMs(kT0Ms + static_cast<int64_t>(*to_min * kMin));
  return h;
}

IdleGpuOptions OptionsAt(double now_min) {
  IdleGpuOptions o;
  o.now = AtMs(kT0Ms + static_cast<int64_t>(now_min * kMin));
  return o;
}

TEST(IdleGpus, AnHourIdleBetweenBusyHalfHours) {
  // Busy 0-30 min (0.9), idle 30-90 (0.01), busy 90-120 (0.8). The first
  // idle sample is at 30:00; the last at 89:30 stands until the next, at
  // 90:00. So one episode 30:00-90:00: 1.0 GPU-hour, mean 0.01, ended.
  GpuUtilizationSeries s{"node-a", "0", Samples(0, 120, [](double m) {
                           return m < 30 ? 0.9 : m < 90 ? 0.01 : 0.8;
                         })};
  const GpuHolding h = Holder("trainer-0", "llama", 0, std::nullopt);
  auto got = FindIdleAllocatedGpus({&h, 1}, {&s, 1}, OptionsAt(120));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  const IdleGpuEpisode& e = (*got)[0];
  EXPECT_EQ(e.since, AtMs(kT0Ms + 30 * kMin));
  EXPECT_EQ(e.until, AtMs(kT0Ms + 90 * kMin));
  EXPECT_DOUBLE_EQ(e.gpu_hours, 1.0);
  EXPECT_NEAR(e.mean_utilization, 0.01, 1e-12);
  EXPECT_FALSE(e.ongoing);
  EXPECT_EQ(e.workload_uid, "w-llama");
  EXPECT_EQ(e.pod_name, "trainer-0");
  EXPECT_EQ(e.serial, "S0");
}

TEST(IdleGpus, AGpuPassedToAnotherPodChargesEachForItsOwnTime) {
  // Idle (0.0) for the whole two hours; pod A holds it 0-40 min, pod B from
  // 40 min on; now = 120 min. A: 0-40 = 40 min >= 30: 2/3 h, ended with A.
  // B: 40-120 = 80 min: 4/3 h, ongoing. Not one 2 h episode for B.
  GpuUtilizationSeries s{"node-a", "0",
                         Samples(0, 120, [](double) { return 0.0; })};
  const GpuHolding hs[] = {Holder("b", "bert", 40, std::nullopt),
                           Holder("a", "llama", 0, 40)};
  auto got = FindIdleAllocatedGpus(hs, {&s, 1}, OptionsAt(120));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  const IdleGpuEpisode& b = (*got)[0];  // ongoing first
  const IdleGpuEpisode& a = (*got)[1];
  EXPECT_EQ(b.pod_name, "b");
  EXPECT_TRUE(b.ongoing);
  EXPECT_EQ(b.since, AtMs(kT0Ms + 40 * kMin));
  EXPECT_EQ(b.until, AtMs(kT0Ms + 120 * kMin));
  EXPECT_NEAR(b.gpu_hours, 80.0 / 60, 1e-12);
  EXPECT_EQ(a.pod_name, "a");
  EXPECT_FALSE(a.ongoing);
  EXPECT_EQ(a.until, AtMs(kT0Ms + 40 * kMin));
  EXPECT_NEAR(a.gpu_hours, 40.0 / 60, 1e-12);

  auto by = IdleGpusByWorkload(*got);
  ASSERT_EQ(by.size(), 2u);
  EXPECT_EQ(by[0].workload_uid, "w-bert");  // idle now first
  EXPECT_EQ(by[0].idle_gpus_now, 1);
  EXPECT_EQ(by[1].workload_uid, "w-llama");
  EXPECT_EQ(by[1].idle_gpus_now, 0);
  EXPECT_NEAR(by[1].gpu_hours, 40.0 / 60, 1e-12);
}

TEST(IdleGpus, AShortHolderInsideALongOneHandsTheGpuBack) {
  // Pod A holds GPU 0 from 0 and still does; pod B also from 60 to 65 min
  // (a debug pod given the same GPU). Idle throughout, now = 180. B holds
  // it 60-65 (5 min: no episode); A before (0-60: 1 h) and after (65-180:
  // 115 min, ongoing), not nobody after 65.
  GpuUtilizationSeries s{"node-a", "0",
                         Samples(0, 180, [](double) { return 0.0; })};
  const GpuHolding hs[] = {Holder("a", "llama", 0, std::nullopt),
                           Holder("b", "debug", 60, 65)};
  auto got = FindIdleAllocatedGpus(hs, {&s, 1}, OptionsAt(180));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].pod_name, "a");
  EXPECT_TRUE((*got)[0].ongoing);
  EXPECT_EQ((*got)[0].since, AtMs(kT0Ms + 65 * kMin));
  EXPECT_NEAR((*got)[0].gpu_hours, 115.0 / 60, 1e-12);
  EXPECT_EQ((*got)[1].pod_name, "a");
  EXPECT_EQ((*got)[1].until, AtMs(kT0Ms + 60 * kMin));
  EXPECT_DOUBLE_EQ((*got)[1].gpu_hours, 1.0);
}

TEST(IdleGpus, TheLastSampleStandsForTheSpacingBeforeIt) {
  // Samples every 30 s for 40 min (the last at 39:30), then one 10 s later
  // (39:40); now is far ahead and the gap allowance is 15 min. The last
  // stands for its own 10 s spacing, not for the 30 s before the sample
  // ahead of it: 0 to 39:50.
  GpuUtilizationSeries s{"node-a", "0",
                         Samples(0, 40, [](double) { return 0.0; })};
  s.points.push_back({kT0Ms + 39 * kMin + 40'000, 0.0});
  const GpuHolding h = Holder("a", "llama", 0, std::nullopt);
  IdleGpuOptions o = OptionsAt(120);
  o.max_sample_gap = std::chrono::minutes(15);
  auto got = FindIdleAllocatedGpus({&h, 1}, {&s, 1}, o);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].until, AtMs(kT0Ms + 39 * kMin + 50'000));
}

TEST(IdleGpus, UnknownTimeEndsAStretch) {
  // Idle 0-25 min, no samples 25-35 (the agent was down), idle 35-60. Two
  // stretches of 25 min, each under the 30 min window: nothing. Counting
  // across the gap would claim an hour.
  GpuUtilizationSeries s{"node-a", "0",
                         Samples(0, 25, [](double) { return 0.0; })};
  for (const SamplePoint& p : Samples(35, 60, [](double) { return 0.0; })) {
    s.points.push_back(p);
  }
  const GpuHolding h = Holder("a", "llama", 0, std::nullopt);
  auto got = FindIdleAllocatedGpus({&h, 1}, {&s, 1}, OptionsAt(60));
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());

  // With a 15 min gap allowed, the gap is idle time too: 0-60 = 1 h, and
  // the last sample (59:30) is 30 s from now: ongoing.
  IdleGpuOptions tolerant = OptionsAt(60);
  tolerant.max_sample_gap = std::chrono::minutes(15);
  got = FindIdleAllocatedGpus({&h, 1}, {&s, 1}, tolerant);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_DOUBLE_EQ((*got)[0].gpu_hours, 1.0);
  EXPECT_TRUE((*got)[0].ongoing);
}

TEST(IdleGpus, NobodysGpuAndTheThresholdItselfAreNotIdleAllocated) {
  // GPU 1 idle for two hours but held by no one; GPU 0 held and at exactly
  // the threshold (5%), which is not under it. Then GPU 0 at 4.9%: idle.
  const GpuUtilizationSeries s[] = {
      {"node-a", "0", Samples(0, 120, [](double) { return 0.05; })},
      {"node-a", "1", Samples(0, 120, [](double) { return 0.0; })}};
  const GpuHolding h = Holder("a", "llama", 0, std::nullopt, "0");
  auto got = FindIdleAllocatedGpus({&h, 1}, s, OptionsAt(120));
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
  const GpuUtilizationSeries low{"node-a", "0",
                                 Samples(0, 120, [](double) { return 0.049; })};
  got = FindIdleAllocatedGpus({&h, 1}, {&low, 1}, OptionsAt(120));
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_DOUBLE_EQ((*got)[0].gpu_hours, 2.0);
}

TEST(IdleGpus, AnIdleStretchShorterThanTheWindowAndNaNSamples) {
  // Idle 0-29.5 min then busy: 29.5 min < 30: nothing. A NaN sample at 15
  // min splits a 40 min idle stretch into 15 + 24.5 min: nothing either.
  const GpuHolding h = Holder("a", "llama", 0, std::nullopt);
  GpuUtilizationSeries s{"node-a", "0", Samples(0, 60, [](double m) {
                           return m < 29.5 ? 0.0 : 0.9;
                         })};
  auto got = FindIdleAllocatedGpus({&h, 1}, {&s, 1}, OptionsAt(60));
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
  s.points = Samples(0, 60, [](double m) {
    return m == 15 ? std::nan("") : m < 40 ? 0.0 : 0.9;
  });
  got = FindIdleAllocatedGpus({&h, 1}, {&s, 1}, OptionsAt(60));
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
}

TEST(IdleGpus, OptionsAreChecked) {
  IdleGpuOptions o;
  auto got = FindIdleAllocatedGpus({}, {}, o);
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("now"), std::string::npos);
  o = OptionsAt(10);
  o.threshold = 0;
  got = FindIdleAllocatedGpus({}, {}, o);
  EXPECT_NE(got.status().message().find("threshold"), std::string::npos);
  o = OptionsAt(10);
  o.window = std::chrono::seconds(0);
  got = FindIdleAllocatedGpus({}, {}, o);
  EXPECT_NE(got.status().message().find("window"), std::string::npos);
}

// The readers on a real store: who held which GPU (by serial, and by bus
// address for a GPU without one), and the utilisation series of the sample
// history, merged per GPU.
TEST(IdleGpus, ReadersGatherTheHistoriesFromAStore) {
  const std::string path =
      ::testing::TempDir() + "idle-gpus-" + std::to_string(::getpid()) + ".db";
  std::filesystem::remove(path);
  auto opened = Store::Open("sqlite://" + path);
  ASSERT_TRUE(opened.ok()) << opened.status();
  Store& store = **opened;
  const Timestamp t0 = AtMs(kT0Ms);
  NodeRecord n;
  n.name = "node-a";
  n.created_at = n.updated_at = t0;
  ASSERT_TRUE(store.nodes().UpsertNodes({&n, 1}, NodeColumns::kAll).ok());
  NodeInventory inv;
  inv.node = "node-a";
  for (int i = 0; i < 2; ++i) {
    GpuDeviceRecord g;
    g.node = "node-a";
    g.gpu_index = i;
    g.model = "AMD Instinct MI300X";
    g.serial = i == 0 ? "SER0" : "";
    g.bdf = i == 0 ? "0000:11:00.0" : "0000:2f:00.0";
    g.updated_at = t0;
    inv.gpus.push_back(g);
  }
  auto synced = store.nodes().SyncNodeDevices({&inv, 1}, t0);
  ASSERT_TRUE(synced.ok()) << synced.status();
  WorkloadRecord w;
  w.uid = "w-1";
  w.name = "llama-70b";
  w.namespace_name = "ml";
  w.kind = "PyTorchJob";
  w.created_at = w.updated_at = t0;
  Status st = store.pods().UpsertWorkloads({&w, 1});
  ASSERT_TRUE(st.ok()) << st;
  PodRecord p;
  p.uid = "p-1";
  p.name = "llama-70b-worker-0";
  p.namespace_name = "ml";
  p.node = "node-a";
  p.owner_uid = "w-1";
  p.running = true;
  p.created_at = p.updated_at = t0;
  st = store.pods().UpsertPods({&p, 1});
  ASSERT_TRUE(st.ok()) << st;
  ContainerRecord c;
  c.container_id = "c-1";
  c.node = "node-a";
  c.pod_uid = "p-1";
  c.pod_name = p.name;
  c.pod_namespace = "ml";
  c.state = ContainerState::kRunning;
  c.created_at = c.updated_at = t0;
  c.started_at = AtMs(kT0Ms + 60'000);
  c.devices = {{DeviceKind::kGpu, "SER0", "0000:11:00.0", "pod-resources"},
               {DeviceKind::kGpu, "0000:2f:00.0", "0000:2f:00.0", "oci-spec"},
               {DeviceKind::kRdma, "mlx5_0", "0000:12:00.0", "oci-spec"}};
  st = store.containers().UpsertContainers({&c, 1});
  ASSERT_TRUE(st.ok()) << st;

  auto holdings = ReadGpuHoldings(store, t0, AtMs(kT0Ms + 3600'000));
  ASSERT_TRUE(holdings.ok()) << holdings.status();
  ASSERT_EQ(holdings->size(), 2u);
  for (const GpuHolding& h : *holdings) {
    EXPECT_EQ(h.node, "node-a");
    EXPECT_EQ(h.workload_uid, "w-1");
    EXPECT_EQ(h.workload_name, "llama-70b");
    EXPECT_EQ(h.pod_name, "llama-70b-worker-0");
    EXPECT_EQ(h.from, AtMs(kT0Ms + 60'000));
    EXPECT_FALSE(h.to.has_value());
  }
  EXPECT_EQ((*holdings)[0].gpu, "0");
  EXPECT_EQ((*holdings)[0].serial, "SER0");
  EXPECT_EQ((*holdings)[1].gpu, "1");

  // Two series for GPU 0 (an agent restart changed `instance`): merged.
  std::vector<MetricSample> samples;
  for (int k = 0; k < 4; ++k) {
    samples.push_back({"lens_gpu_utilization_ratio",
                       {{"node", "node-a"}, {"gpu", "0"}, {"instance", "a:1"}},
                       kT0Ms + k * 60'000,
                       0.25});
    samples.push_back({"lens_gpu_utilization_ratio",
                       {{"node", "node-a"}, {"gpu", "0"}, {"instance", "a:2"}},
                       kT0Ms + (k + 2) * 60'000,
                       0.5});
  }
  st = store.samples().AppendSamples(samples);
  ASSERT_TRUE(st.ok()) << st;
  auto source = NewSampleHistorySource(&store);
  auto series = ReadGpuUtilization(*source, t0, AtMs(kT0Ms + 5 * 60'000),
                                   std::chrono::minutes(1));
  ASSERT_TRUE(series.ok()) << series.status();
  ASSERT_EQ(series->size(), 1u);
  const std::vector<SamplePoint>& pts = (*series)[0].points;
  // Minutes 0-1 from a:1 (0.25), 2-3 from both (max 0.5), 4-5 from a:2.
  ASSERT_EQ(pts.size(), 6u);
  EXPECT_EQ(pts[0].value, 0.25);
  EXPECT_EQ(pts[2].value, 0.5);
  EXPECT_EQ(pts[5].value, 0.5);
  for (size_t i = 1; i < pts.size(); ++i) {
    EXPECT_EQ(pts[i].timestamp_ms - pts[i - 1].timestamp_ms, 60'000);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace lens
