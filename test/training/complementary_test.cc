// DeepSpeed's engine lines next to Megatron's iteration lines, as real
// Megatron-DeepSpeed logs print them (test/fixtures/training/README.md): the
// iteration line defines the record, engine lines only add to it, a resume
// restarting DeepSpeed's timer count does not split the run, and values that
// disagree stay under their own names. Every record is checked field by field.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "lens/training.h"

namespace lens {
namespace {

using F = IterationField;

std::string ReadFixture(const std::string& name) {
  std::string text;
  FILE* f = std::fopen(
      (std::string(LENS_FIXTURES_DIR) + "/training/" + name).c_str(), "rb");
  EXPECT_NE(f, nullptr) << name;
  if (f == nullptr) return text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}

std::set<std::string> FieldNames(const IterationRecord& r) {
  std::set<std::string> names;
  for (const auto& info : IterationFields())
    if (r.Has(info.field)) names.emplace(info.name);
  return names;
}

std::map<std::string, double> Extra(const IterationRecord& r) {
  return {r.extra.begin(), r.extra.end()};
}

// What one record must hold; nan: the key must be absent.
struct Want {
  int64_t iteration;
  uint64_t line;
  double loss, samples_per_s, learning_rate, elapsed_ms;
  double deepspeed_samples_per_s, running_avg;  // extra
  double mem_used_gb, mem_max_allocated_gb;
};

const std::set<std::string> kAlcfFields = {"target_iteration",
                                           "consumed_samples",
                                           "consumed_tokens",
                                           "elapsed_ms",
                                           "learning_rate",
                                           "global_batch_size",
                                           "loss",
                                           "loss_scale",
                                           "grad_norm",
                                           "skipped_iterations",
                                           "nan_iterations",
                                           "tflops_per_gpu",
                                           "tokens_per_s_per_gpu",
                                           "samples_per_s",
                                           "actual_seqlen"};

void Check(const IterationRecord& r, const Want& w,
           std::set<std::string> fields) {
  SCOPED_TRACE("iteration " + std::to_string(w.iteration));
  EXPECT_EQ(r.run, 1);
  EXPECT_EQ(r.iteration, w.iteration);
  EXPECT_EQ(r.line, w.line);
  EXPECT_EQ(r.format, TrainingFormat::kMegatron);
  EXPECT_DOUBLE_EQ(*r.Get(F::kLoss), w.loss);
  EXPECT_DOUBLE_EQ(*r.Get(F::kSamplesPerS), w.samples_per_s);
  EXPECT_DOUBLE_EQ(*r.Get(F::kLearningRate), w.learning_rate);
  EXPECT_DOUBLE_EQ(*r.Get(F::kElapsedMs), w.elapsed_ms);
  EXPECT_EQ(*r.Get(F::kSkippedIterations), 0);
  std::map<std::string, double> extra = Extra(r);
  ASSERT_EQ(extra.count("deepspeed_skipped_total"), 1u);
  if (std::isnan(w.deepspeed_samples_per_s)) {
    EXPECT_EQ(extra.size(), 1u);  // steps without a timer line
  } else {
    EXPECT_EQ(extra.size(), 3u);
    EXPECT_DOUBLE_EQ(extra["deepspeed_samples_per_s"],
                     w.deepspeed_samples_per_s);
    EXPECT_DOUBLE_EQ(extra["runningavgsamplespersec"], w.running_avg);
  }
  // The learning rates agree (Megatron prints 6 digits, DeepSpeed 17): no
  // shadow value.
  EXPECT_EQ(extra.count("deepspeed_learning_rate"), 0u);
  if (!std::isnan(w.mem_used_gb)) {
    fields.insert("mem_used_gb");
    fields.insert("mem_max_allocated_gb");
    EXPECT_DOUBLE_EQ(*r.Get(F::kMemUsedGb), w.mem_used_gb);
    EXPECT_DOUBLE_EQ(*r.Get(F::kMemMaxAllocatedGb), w.mem_max_allocated_gb);
  }
  EXPECT_EQ(FieldNames(r), fields);
}

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

// Aurora 2025, resumed from global_step136000 with DeepSpeed 0.17.5: the
// timer line counts global_step from 0 (and prints nothing for the first two
// steps) while "step=" and the iteration continue from the checkpoint.
TEST(ComplementaryLinesTest, ResumedAlcfRunIsOneRunOfSevenRecords) {
  TrainingLog log = ParseTrainingLog(ReadFixture("alcf_resumed_2025.log"));
  EXPECT_EQ(log.stats.unparsed_candidates, 0u) << log.stats.unparsed_example;
  ASSERT_EQ(log.records.size(), 7u);
  ASSERT_EQ(SummarizeTrainingLog(log).size(), 1u);
  const Want want[] = {
      {136001, 12, 12.069709, 1799.931, 2.0128e-05, 3413.5, kNone, kNone, kNone,
       kNone},
      {136002, 21, 12.481226, 1816.853, 2.01277e-05, 3381.7, kNone, kNone,
       kNone, kNone},
      {136003, 31, 11.960618, 1811.059, 2.01274e-05, 3392.5, 2578.445643287981,
       2455.272398865941, 3.71, 39},
      {136004, 40, 12.393972, 1800.891, 2.01271e-05, 3411.6, 2539.9137986379587,
       2407.238180754348, 3.71, 39},
      {136005, 49, 12.166592, 1800.367, 2.01268e-05, 3412.6, 2527.9942512510165,
       2433.1182414995706, 3.71, 39},
      {136006, 60, 12.014076, 1786.892, 2.01265e-05, 3438.4, 2555.411136575952,
       2415.3777953254516, 3.71, 39},
      {136007, 69, 11.511379, 1811.138, 2.01262e-05, 3392.3, 2544.346421848789,
       2457.2805799233897, 3.71, 39},
  };
  for (size_t i = 0; i < 7; ++i) Check(log.records[i], want[i], kAlcfFields);
  for (const auto& r : log.records)
    EXPECT_EQ(Extra(r)["deepspeed_skipped_total"], 0);
  // start, the save of 136005 and its end
  ASSERT_EQ(log.events.size(), 3u);
  EXPECT_EQ(log.events[1].type, TrainingEventType::kCheckpointSaveStart);
  EXPECT_EQ(log.events[1].iteration, 136005);
  EXPECT_EQ(log.events[2].iteration, 136005);
}

// Polaris 2024 (classic "key: value" line, fp16): the iteration line's own
// samples per second, skipped count and learning rate win over DeepSpeed's
// CurrSamplesPerSec, cumulative skipped=N and lr.
TEST(ComplementaryLinesTest, IterationLineValuesWinOverDeepSpeedOnes) {
  TrainingLog log = ParseTrainingLog(ReadFixture("polaris_2024.log"));
  EXPECT_EQ(log.stats.unparsed_candidates, 0u) << log.stats.unparsed_example;
  ASSERT_EQ(log.records.size(), 6u);
  const double skipped_total[] = {3, 3, 4, 4, 4, 4};
  const double interval_skipped[] = {0, 0, 1, 0, 0, 0};
  const double samples_per_s[] = {53.378, 53.683, 52.656,
                                  53.772, 53.763, 52.975};
  const double ds_samples_per_s[] = {58.71500543356543, 60.75032650635369,
                                     60.31623912841793, 59.37413286938282,
                                     57.73394014748004, 59.06122414263565};
  for (size_t i = 0; i < 6; ++i) {
    const IterationRecord& r = log.records[i];
    SCOPED_TRACE(r.iteration);
    EXPECT_EQ(r.iteration, static_cast<int64_t>(195 + i));
    EXPECT_EQ(r.run, 1);
    EXPECT_DOUBLE_EQ(*r.Get(F::kSamplesPerS), samples_per_s[i]);
    EXPECT_EQ(*r.Get(F::kSkippedIterations), interval_skipped[i]);
    EXPECT_DOUBLE_EQ(*r.Get(F::kLearningRate), i == 5 ? 2.407e-4 : 2.406e-4);
    EXPECT_DOUBLE_EQ(*r.Get(F::kMemUsedGb), 6.01);
    std::map<std::string, double> extra = Extra(r);
    EXPECT_EQ(extra["deepspeed_skipped_total"], skipped_total[i]);
    EXPECT_DOUBLE_EQ(extra["deepspeed_samples_per_s"], ds_samples_per_s[i]);
    EXPECT_EQ(extra.count("deepspeed_learning_rate"), 0u);
    EXPECT_EQ(extra.size(), 3u);
  }
  // Interval counts add up; DeepSpeed's running total is not added on top.
  EXPECT_EQ(SummarizeTrainingLog(log).front().skipped_iterations, 1u);
}

// Every record and event comes out once, in input order, however the input is
// chunked and whenever the caller takes.
TEST(ComplementaryLinesTest, StreamingInSmallChunksGivesTheSameOutput) {
  for (const char* name : {"alcf_resumed_2025.log", "polaris_2024.log",
                           "megatron_deepspeed.log", "deepspeed.log"}) {
    SCOPED_TRACE(name);
    const std::string text = ReadFixture(name);
    const TrainingLog whole = ParseTrainingLog(text);
    for (size_t chunk : {1u, 7u, 64u, 4096u}) {
      TrainingLogParser p;
      std::vector<IterationRecord> records;
      std::vector<TrainingEvent> events;
      for (size_t pos = 0; pos < text.size(); pos += chunk) {
        p.Feed(std::string_view(text).substr(pos, chunk));
        for (auto& r : p.TakeRecords()) records.push_back(std::move(r));
        for (auto& e : p.TakeEvents()) events.push_back(std::move(e));
      }
      p.Finish();
      for (auto& r : p.TakeRecords()) records.push_back(std::move(r));
      for (auto& e : p.TakeEvents()) events.push_back(std::move(e));
      ASSERT_EQ(records.size(), whole.records.size());
      ASSERT_EQ(events.size(), whole.events.size());
      for (size_t i = 0; i < records.size(); ++i) {
        std::string a, b;
        AppendJson(records[i], &a);
        AppendJson(whole.records[i], &b);
        EXPECT_EQ(a, b);
      }
      for (size_t i = 0; i < events.size(); ++i) {
        std::string a, b;
        AppendJson(events[i], &a);
        AppendJson(whole.events[i], &b);
        EXPECT_EQ(a, b);
      }
    }
  }
}

// The rules of docs/training-log-schema.md ("Runs") on short inputs.
TEST(ComplementaryLinesTest, EngineLinesNeverStartRunsOnceIterationLinesExist) {
  const std::string iteration =
      " iteration      %d/    2000 | lm loss: 2.5E+00 | samples per second: "
      "40.0 |\n";
  auto it = [&](int n) {
    char buf[200];
    std::snprintf(buf, sizeof(buf), iteration.c_str(), n);
    return std::string(buf);
  };
  // A timer line of a step whose step line is missing (a cut excerpt), then
  // steps whose timer count restarted.
  std::string text =
      "epoch=0/micro_step=4/global_step=4, CurrSamplesPerSec=1.0\n"
      "[Rank 0] step=136005, skipped=0, lr=[1e-05], mom=[(0.9, 0.95)]\n"
      "epoch=0/micro_step=5/global_step=5, CurrSamplesPerSec=41.0, "
      "MemAllocated=3.7GB\n" +
      it(136005) +
      "[Rank 0] step=136006, skipped=0, lr=[1e-05], mom=[(0.9, 0.95)]\n"
      "epoch=0/micro_step=6/global_step=6, CurrSamplesPerSec=42.0, "
      "MemAllocated=3.8GB\n" +
      it(136006) +
      // Engine lines of a step whose iteration line was not printed.
      "[Rank 0] step=136007, skipped=1, lr=[1e-05], mom=[(0.9, 0.95)]\n" +
      it(136008);
  TrainingLog log = ParseTrainingLog(text);
  ASSERT_EQ(log.records.size(), 3u);
  EXPECT_EQ(SummarizeTrainingLog(log).size(), 1u);
  EXPECT_EQ(log.records[0].iteration, 136005);
  EXPECT_EQ(*log.records[0].Get(F::kMemUsedGb), 3.7);
  EXPECT_EQ(Extra(log.records[0])["deepspeed_samples_per_s"], 41.0);
  EXPECT_EQ(*log.records[1].Get(F::kMemUsedGb), 3.8);
  EXPECT_EQ(log.records[2].iteration, 136008);
  EXPECT_FALSE(log.records[2].Has(F::kMemUsedGb));
  EXPECT_EQ(Extra(log.records[2]).count("deepspeed_skipped_total"), 0u);
}

}  // namespace
}  // namespace lens
