// Validation results and memory reports, in the shapes frameworks print them
// (docs/training-log-schema.md names each source).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "lens/training.h"

namespace lens {
namespace {

std::map<std::string, double> Extra(const ValidationRecord& v) {
  return {v.extra.begin(), v.extra.end()};
}

constexpr char kIteration[] =
    " iteration      %d/    1000 | lm loss: 2.5E+00 |\n";

std::string It(int n) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), kIteration, n);
  return buf;
}

TEST(ValidationTest, MegatronPeriodicEndOfTrainingAndExtraLosses) {
  TrainingLog log = ParseTrainingLog(
      It(100) +
      "-----------------------------------------------------------------\n"
      " validation loss at iteration 100 | lm loss value: 8.095942E+00 | lm "
      "loss PPL: 3.281128E+03 | reg loss value: 7.631986E+03 | reg loss PPL: "
      "4.851652E+08 | \n"
      "-----------------------------------------------------------------\n" +
      It(200) +
      " validation loss at the end of training for val data | lm loss value: "
      "1.795973E+00 | lm loss PPL: 6.025333E+00 |\n"
      " validation loss at iteration 200 on test set | lm loss value: "
      "1.801E+00 | lm loss PPL: 6.05E+00 | \n");
  EXPECT_EQ(log.records.size(), 2u);
  ASSERT_EQ(log.validations.size(), 3u);
  const ValidationRecord& v = log.validations[0];
  EXPECT_EQ(v.iteration, 100);
  EXPECT_EQ(v.line, 3u);
  EXPECT_EQ(v.split, EvaluationSplit::kValidation);
  EXPECT_FALSE(v.end_of_training);
  EXPECT_DOUBLE_EQ(*v.loss, 8.095942);
  EXPECT_DOUBLE_EQ(*v.perplexity, 3281.128);
  EXPECT_EQ(Extra(v),
            (std::map<std::string, double>{{"reg loss", 7631.986},
                                           {"reg loss ppl", 4.851652e8}}));
  // "the end of training" prints no iteration: the run's latest.
  EXPECT_EQ(log.validations[1].iteration, 200);
  EXPECT_TRUE(log.validations[1].end_of_training);
  EXPECT_EQ(log.validations[2].split, EvaluationSplit::kTest);
  EXPECT_DOUBLE_EQ(*log.validations[2].loss, 1.801);
  EXPECT_EQ(log.stats.validations, 3u);
  EXPECT_EQ(log.stats.unparsed_candidates, 0u) << log.stats.unparsed_example;
  auto runs = SummarizeTrainingLog(log);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].validations, 2u);  // the test split is not counted
  EXPECT_DOUBLE_EQ(*runs[0].last_validation_loss, 1.795973);
}

// The ALCF fork prints the values without separators (Aurora 2025).
TEST(ValidationTest, AlcfValuesWithoutSeparators) {
  TrainingLog log = ParseTrainingLog(
      "[2025-11-10 12:29:58,134910][I][megatron/training:1693:evaluate_and_"
      "print_results]  validation loss at iteration 137650 on 122880-sample "
      "draw from validation set | lm loss value=2.697780lm loss "
      "PPL=14.846734\n");
  ASSERT_EQ(log.validations.size(), 1u);
  const ValidationRecord& v = log.validations[0];
  EXPECT_EQ(v.iteration, 137650);
  EXPECT_TRUE(v.end_of_training);
  EXPECT_EQ(v.split, EvaluationSplit::kValidation);
  EXPECT_DOUBLE_EQ(*v.loss, 2.69778);
  EXPECT_DOUBLE_EQ(*v.perplexity, 14.846734);
  EXPECT_TRUE(v.extra.empty());
  ASSERT_TRUE(v.timestamp_s.has_value());
}

TEST(ValidationTest, TorchTitanLightningAndHuggingFace) {
  // Every rank prints TorchTitan's line: one result. It is not a training
  // step.
  TrainingLog titan = ParseTrainingLog(
      "[rank0]:[titan] 2025-10-30 14:32:58,897 - root - INFO - step: 100  "
      "loss:  4.1661  memory:  2.47GiB(3.12%)  tps: 3,502  tflops: 1.90  mfu: "
      "0.19%\n"
      "[rank0]:[titan] 2025-10-30 14:33:01,001 - root - INFO - "
      "\x1b[33mvalidate "
      "step: 100  \x1b[32mloss:  5.1234  \x1b[38;2;54;234;195mmemory:  "
      "2.47GiB(3.12%)  \x1b[34mtps: 6,785\x1b[39m\n"
      "[rank1]:[titan] 2025-10-30 14:33:01,002 - root - INFO - validate step: "
      "100  loss:  5.1234  memory:  2.47GiB(3.12%)  tps: 6,785\n");
  ASSERT_EQ(titan.records.size(), 1u);
  ASSERT_EQ(titan.validations.size(), 1u);
  EXPECT_EQ(titan.validations[0].iteration, 100);
  EXPECT_EQ(titan.validations[0].format, TrainingFormat::kTorchTitan);
  EXPECT_DOUBLE_EQ(*titan.validations[0].loss, 5.1234);

  TrainingLog lightning = ParseTrainingLog(
      "Epoch 0, global step 9: 'val_loss' reached 1.26396 (best 1.26396), "
      "saving model to '/ckpt/evo2--val_loss=1.2640-epoch=0.ckpt' as top 5\n");
  ASSERT_EQ(lightning.validations.size(), 1u);
  EXPECT_EQ(lightning.validations[0].iteration, 9);
  EXPECT_DOUBLE_EQ(*lightning.validations[0].loss, 1.26396);

  // Newer transformers print values as strings.
  TrainingLog hf = ParseTrainingLog(
      " 10%|#         | 20/200 [01:03<05:30,  1.94s/it]{'loss': '19.79', "
      "'grad_norm': '0.09695', 'learning_rate': '0.0001803', 'epoch': "
      "'1.176'}\n"
      "{'eval_loss': '9.86', 'eval_runtime': '4.061', "
      "'eval_samples_per_second': '8.372', 'epoch': '1'}\n");
  ASSERT_EQ(hf.records.size(), 1u);
  ASSERT_EQ(hf.validations.size(), 1u);
  EXPECT_EQ(hf.validations[0].iteration, 20);  // the latest step
  EXPECT_DOUBLE_EQ(*hf.validations[0].loss, 9.86);
  EXPECT_EQ(Extra(hf.validations[0]),
            (std::map<std::string, double>{{"runtime", 4.061},
                                           {"samples per second", 8.372}}));
}

TEST(MemoryReportTest, RanksGluedOnOneLineAndCurrentFormat) {
  TrainingLog log = ParseTrainingLog(
      It(20) +
      "[Rank 25] (after 20 iterations) memory (MB) | allocated: "
      "17693.361328125 | max allocated: 19944.5126953125 | reserved: 23974.0 "
      "| max reserved: 23974.0[Rank 27] (after 20 iterations) memory (MB) | "
      "allocated: 17693.361328125 | max allocated: 19944.5126953125 | "
      "reserved: 23954.0 | max reserved: 23954.0\n"
      "[Rank 0] (before save_checkpoint for iteration 20) memory (MB) | "
      "allocated: 17694.36 | max allocated: 22112.81 | reserved: 26732.00 | "
      "max reserved: 26732.00 | total device memory used: 30100.50\n"
      "[Rank 0] (after 20 iterations) memory (MB) | allocated: 1 | max "
      "allocated: 2 | reserved: 3 | max reserved: 4\n"
      "[Rank 0] (after 20 iterations) memory (MB) | allocated: 1 | max "
      "allocated: 2 | reserved: 3 | max reserved: 4\n");
  ASSERT_EQ(log.memory_reports.size(), 4u);  // the repeated last one dropped
  const MemoryReport& a = log.memory_reports[0];
  EXPECT_EQ(a.rank, 25);
  EXPECT_EQ(a.iteration, 20);
  EXPECT_EQ(a.line, 2u);
  EXPECT_DOUBLE_EQ(*a.allocated_mb, 17693.361328125);
  EXPECT_DOUBLE_EQ(*a.max_reserved_mb, 23974.0);
  EXPECT_EQ(log.memory_reports[1].rank, 27);
  EXPECT_DOUBLE_EQ(*log.memory_reports[1].reserved_mb, 23954.0);
  EXPECT_EQ(a.context, "after 20 iterations");
  EXPECT_EQ(log.memory_reports[2].context,
            "before save_checkpoint for iteration 20");
  EXPECT_EQ(log.memory_reports[2].iteration, 20);
  EXPECT_DOUBLE_EQ(*log.memory_reports[2].max_allocated_mb, 22112.81);
  EXPECT_EQ(log.stats.memory_reports, 4u);
  EXPECT_EQ(log.stats.unparsed_candidates, 0u);
}

}  // namespace
}  // namespace lens
