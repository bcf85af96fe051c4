// Goodput on real training logs of several frameworks (test/fixtures/
// training): each parsed as the store would get it, given a workload
// created two minutes before the first logged iteration and a pod running
// one minute before it, and looked at five minutes after the last. The
// parts that do not depend on the log's pace are known exactly; the rest
// must add up.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "lens/insights.h"
#include "lens/training.h"

namespace lens {
namespace {

Timestamp AtSeconds(double s) {
  return Timestamp(std::chrono::microseconds(static_cast<int64_t>(s * 1e6)));
}

struct LogCase {
  const char* file;
  int runs;  // the parser's runs, one after another in these logs
};

class GoodputLogTest : public ::testing::TestWithParam<LogCase> {};

TEST_P(GoodputLogTest, PartsAddUpAndRestartsAreTheRuns) {
  auto log = ParseTrainingLogFile(std::string(LENS_FIXTURES_DIR) +
                                  "/training/" + GetParam().file);
  ASSERT_TRUE(log.ok()) << log.status();
  double first = 1e300, last = -1e300;
  std::set<int32_t> runs;
  for (const IterationRecord& r : log->records) {
    ASSERT_TRUE(r.timestamp_s) << "line " << r.line;
    first = std::min(first, *r.timestamp_s);
    last = std::max(last, *r.timestamp_s);
    runs.insert(r.run);
  }
  ASSERT_EQ(static_cast<int>(runs.size()), GetParam().runs);
  GoodputInput in;
  in.created_at = AtSeconds(first - 120);
  in.now = AtSeconds(last + 300);
  in.pods = {
      {"p", AtSeconds(first - 120), AtSeconds(first - 60), std::nullopt}};
  in.iterations = log->records;
  in.events = log->events;
  in.gpu_model = "AMD Instinct MI300X";
  auto got = ComputeGoodput(in);
  ASSERT_TRUE(got.ok()) << got.status();
  const GoodputBreakdown& t = got->total;
  // Created to running: 60 s; running to the first iteration: 60 s; the
  // last five minutes: idle (with any stall).
  EXPECT_NEAR(t.scheduling_s, 60, 1e-3);
  EXPECT_NEAR(t.startup_s, 60, 1e-3);
  EXPECT_GE(t.idle_s, 300 - 1e-3);
  EXPECT_NEAR(t.wall_s, last - first + 420, 1e-3);
  EXPECT_NEAR(t.scheduling_s + t.startup_s + t.productive_s + t.checkpoint_s +
                  t.restart_s + t.idle_s,
              t.wall_s, 1e-6);
  EXPECT_GT(t.productive_s, 0);
  EXPECT_GT(t.goodput, 0);
  EXPECT_LT(t.goodput, 1);
  EXPECT_EQ(got->restarts, GetParam().runs - 1);
  EXPECT_EQ(static_cast<int>(got->runs.size()), GetParam().runs);
  EXPECT_EQ(got->iterations_without_time, 0);
  EXPECT_GT(got->iterations_used, 1);
  if (GetParam().runs > 1) EXPECT_GT(t.restart_s, 0);
  if (got->tflops_per_gpu) {
    EXPECT_DOUBLE_EQ(*got->mfu, *got->tflops_per_gpu / 1307.4);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Logs, GoodputLogTest,
    ::testing::Values(LogCase{"primus_rocm.log", 3},
                      LogCase{"megatron_lm_core_r0.x.log", 2},
                      LogCase{"torchtitan.log", 1}, LogCase{"deepspeed.log", 1},
                      LogCase{"cri_wrapped.log", 1},
                      LogCase{"megatron_deepspeed_kv.log", 1}),
    [](const ::testing::TestParamInfo<LogCase>& info) {
      std::string name = info.param.file;
      name = name.substr(0, name.find('.'));
      std::replace(name.begin(), name.end(), '.', '_');
      return name;
    });

}  // namespace
}  // namespace lens
