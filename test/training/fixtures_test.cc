// Real-format fixture logs (test/fixtures/training/README.md says where each
// format comes from): each parses into the expected runs, records and events,
// with no format drift except where the fixture plants malformed lines on
// purpose.
#include <gtest/gtest.h>

#include <cmath>

#include "lens/training.h"

namespace lens {
namespace {

using F = IterationField;

TrainingLog Load(const std::string& name) {
  auto log = ParseTrainingLogFile(std::string(LENS_FIXTURES_DIR) +
                                  "/training/" + name);
  EXPECT_TRUE(log.ok()) << log.status();
  return log.ok() ? *std::move(log) : TrainingLog();
}

struct Expected {
  const char* file;
  TrainingFormat format;
  size_t runs, records, events;
  uint64_t candidates;
  int64_t first_iteration, last_iteration;
};

constexpr Expected kExpected[] = {
    {"megatron_lm_core_r0.x.log", TrainingFormat::kMegatron, 2, 92, 7, 0, 10,
     800},
    {"megatron_lm_2021.log", TrainingFormat::kMegatron, 1, 60, 6, 0, 10, 600},
    {"megatron_deepspeed.log", TrainingFormat::kMegatron, 1, 30, 4, 0, 10, 300},
    {"megatron_deepspeed_kv.log", TrainingFormat::kMegatron, 1, 20, 2, 0,
     136001, 136020},
    {"primus_rocm.log", TrainingFormat::kPrimus, 3, 90, 9, 0, 1, 30},
    {"torchtitan.log", TrainingFormat::kTorchTitan, 1, 31, 8, 0, 1, 300},
    {"nemo2.log", TrainingFormat::kNeMo, 1, 31, 7, 0, 0, 299},
    {"hf_trainer.log", TrainingFormat::kHfTrainer, 1, 12, 4, 0, 10, 120},
    {"deepspeed.log", TrainingFormat::kDeepSpeed, 1, 32, 5, 0, 10, 320},
    {"cri_wrapped.log", TrainingFormat::kMegatron, 1, 20, 4, 0, 5, 100},
    {"fluentbit.jsonl", TrainingFormat::kMegatron, 1, 16, 4, 0, 10, 160},
    {"noise_mixed.log", TrainingFormat::kMegatron, 1, 104, 0, 3, 10, 1040},
};

class FixtureTest : public ::testing::TestWithParam<Expected> {};

TEST_P(FixtureTest, ParsesIntoExpectedRunsRecordsAndEvents) {
  const Expected& want = GetParam();
  TrainingLog log = Load(want.file);
  auto runs = SummarizeTrainingLog(log);
  ASSERT_EQ(runs.size(), want.runs);
  EXPECT_EQ(log.records.size(), want.records);
  EXPECT_EQ(log.events.size(), want.events);
  EXPECT_EQ(log.stats.unparsed_candidates, want.candidates)
      << log.stats.unparsed_example;
  EXPECT_EQ(runs.front().format, want.format);
  EXPECT_EQ(log.records.front().iteration, want.first_iteration);
  EXPECT_EQ(log.records.back().iteration, want.last_iteration);
  // Within a run iterations strictly increase; run numbers never decrease.
  for (size_t i = 1; i < log.records.size(); ++i) {
    const auto& a = log.records[i - 1];
    const auto& b = log.records[i];
    ASSERT_LE(a.run, b.run);
    if (a.run == b.run) {
      EXPECT_LT(a.iteration, b.iteration) << want.file << " line " << b.line;
    }
  }
  // Streaming in odd-sized chunks gives the same records.
  std::string text;
  {
    FILE* f = std::fopen(
        (std::string(LENS_FIXTURES_DIR) + "/training/" + want.file).c_str(),
        "rb");
    ASSERT_NE(f, nullptr);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
    std::fclose(f);
  }
  TrainingLogParser p;
  for (size_t pos = 0; pos < text.size(); pos += 37)
    p.Feed(std::string_view(text).substr(pos, 37));
  p.Finish();
  EXPECT_EQ(p.TakeRecords().size(), want.records);
  EXPECT_EQ(p.TakeEvents().size(), want.events);
}

INSTANTIATE_TEST_SUITE_P(Training, FixtureTest, ::testing::ValuesIn(kExpected),
                         [](const auto& info) {
                           std::string name = info.param.file;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           }
                           return name;
                         });

const IterationRecord* Find(const TrainingLog& log, int32_t run,
                            int64_t iteration) {
  for (const auto& r : log.records) {
    if (r.run == run && r.iteration == iteration) return &r;
  }
  return nullptr;
}

TEST(FixtureValuesTest, MegatronResumeStartsSecondRunAtCheckpoint) {
  TrainingLog log = Load("megatron_lm_core_r0.x.log");
  const IterationRecord* r = Find(log, 2, 510);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->Has(F::kParamsNorm));
  EXPECT_EQ(*r->Get(F::kTargetIteration), 800);
  ASSERT_NE(Find(log, 1, 620), nullptr);
  EXPECT_EQ(Find(log, 1, 620)->Get(F::kParamsNorm), std::nullopt);
}

TEST(FixtureValuesTest, Megatron2021SkippedIterationsHaveNoLoss) {
  TrainingLog log = Load("megatron_lm_2021.log");
  const IterationRecord* r = Find(log, 1, 10);
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(r->Has(F::kLoss));
  EXPECT_FALSE(r->Has(F::kGradNorm));
  EXPECT_EQ(*r->Get(F::kSkippedIterations), 10);
  EXPECT_EQ(*r->Get(F::kLossScale), 4194304.0);
}

TEST(FixtureValuesTest, PrimusGenerationsAllGiveMemory) {
  TrainingLog log = Load("primus_rocm.log");
  for (int run = 1; run <= 3; ++run) {
    for (const auto& r : log.records) {
      if (r.run != run) continue;
      EXPECT_TRUE(r.Has(F::kMemUsageRatio))
          << "run " << run << " line " << r.line;
      EXPECT_TRUE(r.Has(F::kElapsedMsAvg))
          << "run " << run << " line " << r.line;
      EXPECT_LE(*r.Get(F::kMemUsageRatio), 1.0);
      EXPECT_EQ(*r.world_size, run == 1 ? 8 : (run == 2 ? 64 : 16));
    }
  }
  // Runs 2 and 3 print used/free/total too.
  const IterationRecord* r = Find(log, 2, 10);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->Has(F::kMemTotalGb));
  EXPECT_TRUE(r->Has(F::kTflopsPerGpuAvg));
}

TEST(FixtureValuesTest, TorchTitanCheckpointDurationsAndRankDedup) {
  TrainingLog log = Load("torchtitan.log");
  EXPECT_GT(log.stats.duplicate_iterations, 0u);
  int ends = 0;
  for (const auto& e : log.events) {
    if (e.type != TrainingEventType::kCheckpointSaveEnd) continue;
    ++ends;
    ASSERT_TRUE(e.duration_s);
    EXPECT_GT(*e.duration_s, 20.0);
    EXPECT_EQ(*e.iteration % 100, 0);
  }
  EXPECT_EQ(ends, 3);
  const IterationRecord* r = Find(log, 1, 300);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->Has(F::kMfu));
  EXPECT_LT(*r->Get(F::kMfu), 1.0);
}

TEST(FixtureValuesTest, NemoCheckpointsAreOneStartAndEndPerSave) {
  TrainingLog log = Load("nemo2.log");
  int starts = 0, ends = 0;
  for (const auto& e : log.events) {
    starts += e.type == TrainingEventType::kCheckpointSaveStart;
    ends += e.type == TrainingEventType::kCheckpointSaveEnd;
    if (e.type == TrainingEventType::kCheckpointSaveEnd) {
      EXPECT_TRUE(e.duration_s);
    }
  }
  EXPECT_EQ(starts, 3);
  EXPECT_EQ(ends, 3);
  EXPECT_TRUE(Find(log, 1, 299)->Has(F::kTflopsPerGpu));
}

TEST(FixtureValuesTest, DeepSpeedMergesStepAndTimerLines) {
  TrainingLog log = Load("deepspeed.log");
  for (const auto& r : log.records) {
    EXPECT_TRUE(r.Has(F::kLearningRate)) << r.line;
    EXPECT_TRUE(r.Has(F::kSamplesPerS)) << r.line;
  }
}

TEST(FixtureValuesTest, HfTrainerStepsComeFromProgressBars) {
  TrainingLog log = Load("hf_trainer.log");
  for (size_t i = 0; i < log.records.size(); ++i) {
    EXPECT_EQ(log.records[i].iteration, static_cast<int64_t>(10 * (i + 1)));
  }
}

TEST(FixtureValuesTest, NanLossIsKeptAsNan) {
  TrainingLog log = Load("megatron_deepspeed_kv.log");
  auto runs = SummarizeTrainingLog(log);
  ASSERT_EQ(runs.size(), 1u);
  bool any_nan = false;
  for (const auto& r : log.records) {
    for (auto f : {F::kLoss, F::kGradNorm}) {
      if (auto v = r.Get(f); v && std::isnan(*v)) any_nan = true;
    }
  }
  EXPECT_TRUE(any_nan);
}

}  // namespace
}  // namespace lens
