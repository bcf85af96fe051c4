// Goodput and MFU on a scripted job that was restarted twice, with every
// part of its wall time worked out by hand; the GPU peak table's lookups.
#include <gtest/gtest.h>

#include <set>

#include "lens/insights.h"

namespace lens {
namespace {

constexpr double kT0 = 1764000000;  // Unix seconds

Timestamp At(double s) {
  return Timestamp(
      std::chrono::microseconds(static_cast<int64_t>((kT0 + s) * 1e6)));
}

IterationRecord Iter(int32_t run, double t, int64_t iteration, double tflops,
                     std::optional<int32_t> rank = std::nullopt) {
  IterationRecord r;
  r.run = run;
  r.timestamp_s = kT0 + t;
  r.iteration = iteration;
  r.rank = rank;
  r.Set(IterationField::kTflopsPerGpu, tflops);
  return r;
}

// Created at 0, first pod running at 120, ended at 3500 (seconds).
// Run 1: iterations 10..100 every 100 s from 300 (10 s per iteration), a
//   checkpoint save of 20 s (700-720) between iterations 50 and 60; fails
//   after iteration 100 at 1220. 400 TFLOP/s.
// Run 2: resumes from iteration 50: 60 at 1500 ... 120 at 2100, 380 TFLOP/s.
// Run 3: resumes from iteration 100: 110 at 2400 ... 140 at 2700, a stall
//   until 150 at 3300 (logged at 200 TFLOP/s), 160 at 3400; 420 otherwise.
GoodputInput ThreeRuns() {
  GoodputInput in;
  in.created_at = At(0);
  in.ended_at = At(3500);
  in.now = At(4000);
  in.gpu_model = "AMD Instinct MI300X";
  in.pods = {{"p1", At(0), At(120), At(1300)},
             {"p2", At(1300), At(1400), At(2200)},
             {"p3", At(2200), At(2300), At(3500)}};
  const double run1[][2] = {{300, 10},  {400, 20},  {500, 30}, {600, 40},
                            {700, 50},  {820, 60},  {920, 70}, {1020, 80},
                            {1120, 90}, {1220, 100}};
  for (const auto& p : run1) in.iterations.push_back(Iter(1, p[0], p[1], 400));
  for (int k = 0; k < 7; ++k) {
    in.iterations.push_back(Iter(2, 1500 + 100 * k, 60 + 10 * k, 380));
  }
  const double run3[][3] = {{2400, 110, 420}, {2500, 120, 420},
                            {2600, 130, 420}, {2700, 140, 420},
                            {3300, 150, 200}, {3400, 160, 420}};
  for (const auto& p : run3) {
    in.iterations.push_back(Iter(3, p[0], static_cast<int64_t>(p[1]), p[2]));
  }
  TrainingEvent save;
  save.type = TrainingEventType::kCheckpointSaveEnd;
  save.run = 1;
  save.iteration = 50;
  save.timestamp_s = kT0 + 720;
  save.duration_s = 20;
  in.events.push_back(save);
  return in;
}

TEST(Goodput, AJobRestartedTwice) {
  auto got = ComputeGoodput(ThreeRuns());
  ASSERT_TRUE(got.ok()) << got.status();
  const GoodputBreakdown& t = got->total;
  // Scheduling: 0 -> 120. Start-up: 120 -> 300 (first iteration).
  EXPECT_DOUBLE_EQ(t.scheduling_s, 120);
  EXPECT_DOUBLE_EQ(t.startup_s, 180);
  // Run 1: 9 intervals, 920 s, of which 20 s checkpoint: 900 productive.
  // Run 2: 1220 -> 1500 restart gap (280); 60->100 were done by run 1:
  //   four intervals redone (400 s); 100->120 productive (200 s).
  // Run 3: 2100 -> 2400 gap (300); 110->120 redone (100 s); 120->140
  //   productive (200 s); 140->150 took 600 s against a pace of 100 s, over
  //   5x: 500 s idle, 100 s productive; 150->160 productive (100 s); 3400
  //   -> 3500 after the last iteration: idle (100 s).
  EXPECT_DOUBLE_EQ(t.productive_s, 900 + 200 + 400);
  EXPECT_DOUBLE_EQ(t.checkpoint_s, 20);
  EXPECT_DOUBLE_EQ(t.restart_s, 280 + 400 + 300 + 100);
  EXPECT_DOUBLE_EQ(t.idle_s, 500 + 100);
  EXPECT_DOUBLE_EQ(t.wall_s, 3500);
  EXPECT_DOUBLE_EQ(t.goodput, 1500.0 / 3500);
  EXPECT_EQ(t.iterations_redone, 40 + 10);
  EXPECT_EQ(got->restarts, 2);
  EXPECT_EQ(got->iterations_used, 23);

  ASSERT_EQ(got->runs.size(), 3u);
  const RunGoodput& r1 = got->runs[0];
  EXPECT_EQ(r1.run, 1);
  EXPECT_EQ(r1.first_iteration, 10);
  EXPECT_EQ(r1.last_iteration, 100);
  EXPECT_EQ(r1.first_iteration_at, At(300));
  EXPECT_DOUBLE_EQ(r1.breakdown.wall_s, 120 + 180 + 900 + 20);
  EXPECT_DOUBLE_EQ(*r1.tflops_per_gpu, 400);
  const RunGoodput& r3 = got->runs[2];
  EXPECT_DOUBLE_EQ(r3.breakdown.restart_s, 400);
  EXPECT_DOUBLE_EQ(r3.breakdown.idle_s, 600);
  // Run 3's productive intervals end at 130, 140, 150 (200) and 160, 100 s
  // each: (3 x 420 + 200) / 4 = 365.
  EXPECT_DOUBLE_EQ(*r3.tflops_per_gpu, 365);
  // All productive time: (400 x 900 + 380 x 200 + 365 x 400) / 1500 = 388;
  // MFU against the MI300X's 1307.4.
  ASSERT_TRUE(got->tflops_per_gpu);
  EXPECT_DOUBLE_EQ(*got->tflops_per_gpu, 388);
  ASSERT_NE(got->peak, nullptr);
  EXPECT_EQ(got->peak->model, "MI300X");
  EXPECT_DOUBLE_EQ(*got->mfu, 388 / 1307.4);
  EXPECT_DOUBLE_EQ(*got->runs[1].mfu, 380 / 1307.4);
}

TEST(Goodput, OtherRanksAndUntimedLinesDoNotCountTwice) {
  // Every record again from rank 1 (half a second later), and from rank 0
  // without timestamps: the split is the same, rank 0's records only.
  GoodputInput in = ThreeRuns();
  const size_t n = in.iterations.size();
  for (size_t i = 0; i < n; ++i) {
    IterationRecord r0 = in.iterations[i];
    r0.rank = 0;
    in.iterations[i] = r0;
    IterationRecord r1 = r0;
    r1.rank = 1;
    *r1.timestamp_s += 0.5;
    in.iterations.push_back(r1);
    IterationRecord untimed = r0;
    untimed.timestamp_s.reset();
    in.iterations.push_back(untimed);
  }
  auto got = ComputeGoodput(in);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_DOUBLE_EQ(got->total.productive_s, 1500);
  EXPECT_DOUBLE_EQ(got->total.wall_s, 3500);
  EXPECT_EQ(got->iterations_used, 23);
  EXPECT_EQ(got->iterations_without_time, 23);
}

TEST(Goodput, EveryPodsLogIsOneAttemptNotARestart) {
  // Each of the three runs copied as the log of a second pod (runs 11, 12,
  // 13, a second later, the same iterations): they overlap the first pod's
  // runs, so they join them; the split is the same as for one log.
  GoodputInput in = ThreeRuns();
  const size_t n = in.iterations.size();
  for (size_t i = 0; i < n; ++i) {
    IterationRecord r = in.iterations[i];
    r.run += 10;
    *r.timestamp_s += 1;
    in.iterations.push_back(r);
  }
  auto got = ComputeGoodput(in);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->restarts, 2);
  EXPECT_DOUBLE_EQ(got->total.productive_s, 1500);
  EXPECT_DOUBLE_EQ(got->total.restart_s, 1080);
  EXPECT_DOUBLE_EQ(got->total.wall_s, 3500);
  EXPECT_EQ(got->iterations_used, 23);
  ASSERT_EQ(got->runs.size(), 3u);
  EXPECT_EQ(got->runs[1].run, 2);
}

TEST(Goodput, AnEndBeforeTheCreationIsNoNegativeTime) {
  GoodputInput in;
  in.created_at = At(100);
  in.ended_at = At(50);
  in.now = At(200);
  auto got = ComputeGoodput(in);
  ASSERT_TRUE(got.ok());
  EXPECT_DOUBLE_EQ(got->total.wall_s, 0);
  EXPECT_DOUBLE_EQ(got->total.scheduling_s, 0);
}

TEST(Goodput, AJobThatNeverLoggedAnIterationIsStartUp) {
  // Created at 0, running at 50, still running at 400, no iterations:
  // 50 s scheduling, 350 s start-up, goodput 0, no MFU.
  GoodputInput in;
  in.created_at = At(0);
  in.now = At(400);
  in.pods = {{"p1", At(0), At(50), std::nullopt}};
  auto got = ComputeGoodput(in);
  ASSERT_TRUE(got.ok());
  EXPECT_DOUBLE_EQ(got->total.scheduling_s, 50);
  EXPECT_DOUBLE_EQ(got->total.startup_s, 350);
  EXPECT_DOUBLE_EQ(got->total.wall_s, 400);
  EXPECT_EQ(got->total.goodput, 0);
  EXPECT_FALSE(got->mfu);
  EXPECT_TRUE(got->runs.empty());
  // Never scheduled: all of it is waiting.
  in.pods[0].started_at.reset();
  got = ComputeGoodput(in);
  ASSERT_TRUE(got.ok());
  EXPECT_DOUBLE_EQ(got->total.scheduling_s, 400);
}

TEST(Goodput, IterationsBeforeAnyPodRanStartTheRunning) {
  // No pod seen running, iterations at 100..300 (every 100 s, 10 each),
  // now = 1000: running from the first iteration at 100, so 100 s
  // scheduling, no start-up, 200 s productive, 700 s idle after the last.
  GoodputInput in;
  in.created_at = At(0);
  in.now = At(1000);
  in.pods = {{"p1", At(0), std::nullopt, std::nullopt}};
  for (int k = 0; k < 3; ++k) {
    in.iterations.push_back(Iter(1, 100 + 100 * k, 10 + 10 * k, 300));
  }
  auto got = ComputeGoodput(in);
  ASSERT_TRUE(got.ok());
  EXPECT_DOUBLE_EQ(got->total.scheduling_s, 100);
  EXPECT_DOUBLE_EQ(got->total.startup_s, 0);
  EXPECT_DOUBLE_EQ(got->total.productive_s, 200);
  EXPECT_DOUBLE_EQ(got->total.idle_s, 700);
  EXPECT_DOUBLE_EQ(got->total.wall_s, 1000);
}

TEST(Goodput, BadInputIsNamed) {
  GoodputInput in;
  in.created_at = At(10);
  EXPECT_NE(ComputeGoodput(in).status().message().find("now"),
            std::string::npos);
  in.now = At(0);
  EXPECT_NE(ComputeGoodput(in).status().message().find("before"),
            std::string::npos);
}

TEST(GpuPeaks, NamesAsDriversPrintThem) {
  struct Case {
    const char* reported;
    const char* model;
    double tflops;
  } cases[] = {
      {"AMD Instinct MI300X", "MI300X", 1307.4},
      {"AMD Instinct MI325X OAM", "MI325X", 1307.4},
      {"AMD Instinct MI250X/MI250", "MI250X", 383},
      {"AMD Instinct MI210", "MI210", 181},
      {"NVIDIA H100 80GB HBM3", "H100 SXM", 989.5},
      {"NVIDIA H100 PCIe", "H100 PCIe", 756.5},
      {"NVIDIA H100 NVL", "H100 NVL", 835.5},
      {"NVIDIA H200", "H200", 989.5},
      {"NVIDIA GH200 480GB", "GH200", 989.5},
      {"NVIDIA B200", "B200", 2250},
      {"NVIDIA A100-SXM4-80GB", "A100", 312},
      {"NVIDIA H200 NVL", "H200 NVL", 835.5},
      {"NVIDIA H800 PCIe", "H100 PCIe", 756.5},
  };
  for (const Case& c : cases) {
    const GpuPeak* p = FindGpuPeak(c.reported);
    ASSERT_NE(p, nullptr) << c.reported;
    EXPECT_EQ(p->model, c.model) << c.reported;
    EXPECT_DOUBLE_EQ(p->dense_bf16_tflops, c.tflops) << c.reported;
  }
  EXPECT_EQ(FindGpuPeak("Tesla V100-SXM2-32GB"), nullptr);
  EXPECT_EQ(FindGpuPeak("NVIDIA RTX A1000"), nullptr);  // not an A100
  EXPECT_EQ(FindGpuPeak(""), nullptr);
  std::set<std::string_view> models;
  for (const GpuPeak& p : GpuPeaks()) {
    EXPECT_TRUE(models.insert(p.model).second) << p.model << " listed twice";
    EXPECT_GT(p.dense_bf16_tflops, 0) << p.model;
    EXPECT_FALSE(p.source.empty()) << p.model;
  }
}

}  // namespace
}  // namespace lens
