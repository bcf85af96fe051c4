// The streaming parser: runs, dedup/merge, chunking, wrappers, bounds and
// counters.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "lens/training.h"

namespace lens {
namespace {

using F = IterationField;

std::string Megatron(int it, int total, double loss) {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                " iteration %8d/%8d | consumed samples: %12d | elapsed time "
                "per iteration (ms): "
                "%.1f | learning rate: 1.000000E-04 | global batch size:   256 "
                "| lm loss: "
                "%.6E | loss scale: 1.0 | grad norm: 0.512 | number of skipped "
                "iterations:   0 | "
                "number of nan iterations:   0 |\n",
                it, total, it * 256, 1000.0 + it % 7, loss);
  return buf;
}

std::string Log(int from, int to, int total = 100) {
  std::string s;
  for (int i = from; i <= to; ++i) {
    s += "some noise line about data loading " + std::to_string(i) + "\n";
    s += Megatron(i, total, 10.0 / i);
  }
  return s;
}

TEST(TrainingParserTest, RecordsCarryLineNumbersAndRun) {
  TrainingLog log = ParseTrainingLog(Log(1, 3));
  ASSERT_EQ(log.records.size(), 3u);
  EXPECT_EQ(log.records[0].line, 2u);
  EXPECT_EQ(log.records[2].line, 6u);
  EXPECT_EQ(log.records[2].iteration, 3);
  EXPECT_EQ(log.records[2].run, 1);
  EXPECT_EQ(log.stats.lines, 6u);
  EXPECT_EQ(log.stats.records, 3u);
}

TEST(TrainingParserTest, NewRunAtTrainingStartAndWhenIterationGoesBack) {
  std::string text =
      "training ...\n" + Log(1, 5) + "training ...\n" + Log(3, 6) + Log(2, 2);
  TrainingLog log = ParseTrainingLog(text, {.first_run = 7});
  ASSERT_EQ(log.records.size(), 5u + 4u + 1u);
  EXPECT_EQ(log.records[4].run, 7);
  EXPECT_EQ(log.records[5].run, 8);
  EXPECT_EQ(log.records[5].iteration, 3);
  EXPECT_EQ(log.records[9].run, 9);  // 6 -> 2: the counter went back
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[0].run, 7);
  EXPECT_EQ(log.events[1].run, 8);
}

TEST(TrainingParserTest, RepeatedStartWithoutRecordsIsOneRun) {
  TrainingLog log = ParseTrainingLog(
      "training ...\n[before the start of training step] datetime: "
      "2021-05-23 08:23:58\ntraining ...\n" +
      Log(1, 2));
  EXPECT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.records[0].run, 1);
}

TEST(TrainingParserTest, RepeatedIterationIsDroppedAndCounted) {
  std::string line = Megatron(5, 10, 1.5);
  TrainingLog log = ParseTrainingLog(line + line + line);
  EXPECT_EQ(log.records.size(), 1u);
  EXPECT_EQ(log.stats.duplicate_iterations, 2u);
}

TEST(TrainingParserTest, ComplementaryLinesOfOneStepAreMerged) {
  std::string text =
      "[Rank 0] step=10, skipped=6, lr=[9.6e-06, 9.6e-06], mom=[(0.9, 0.95)]\n"
      "[timer.py:199:stop] epoch=0/micro_step=10/global_step=10, "
      "RunningAvgSamplesPerSec=173.4, "
      "CurrSamplesPerSec=171.9, MemAllocated=3.96GB, MaxMemAllocated=22.95GB\n";
  TrainingLog log = ParseTrainingLog(text);
  ASSERT_EQ(log.records.size(), 1u);
  EXPECT_EQ(*log.records[0].Get(F::kSkippedIterations), 6);
  EXPECT_EQ(*log.records[0].Get(F::kMemMaxAllocatedGb), 22.95);
}

TEST(TrainingParserTest, RecordIsEmittedWhenCompleteAndReEmittedAfterFlush) {
  TrainingLogParser p;
  p.Feed("[Rank 0] step=10, skipped=6, lr=[9.6e-06], mom=[(0.9, 0.95)]\n");
  // Its step may still print more lines: not complete yet.
  EXPECT_TRUE(p.TakeRecords().empty());
  p.Flush();
  auto first = p.TakeRecords();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_FALSE(first[0].Has(F::kMemUsedGb));
  p.Feed(
      "epoch=0/micro_step=10/global_step=10, CurrSamplesPerSec=171.9, "
      "MemAllocated=3.96GB\n");
  auto second = p.TakeRecords();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].iteration, 10);
  EXPECT_TRUE(second[0].Has(F::kSkippedIterations));
  EXPECT_EQ(*second[0].Get(F::kMemUsedGb), 3.96);
  p.Finish();
  EXPECT_TRUE(p.TakeRecords().empty());
  EXPECT_EQ(p.stats().records, 1u);
}

TEST(TrainingParserTest, AnyChunkingGivesTheSameResult) {
  std::string text = "training ...\n" + Log(1, 20) +
                     "saving checkpoint at iteration 20 to /c\n" +
                     "  successfully saved checkpoint at iteration 20 to /c\n" +
                     Log(21, 25);
  text.pop_back();  // no final newline: Finish() must flush it
  TrainingLog whole = ParseTrainingLog(text);
  std::mt19937 rng(1);
  for (int round = 0; round < 20; ++round) {
    TrainingLogParser p;
    std::vector<IterationRecord> records;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t n = round == 0 ? 1 : 1 + rng() % 97;
      p.Feed(std::string_view(text).substr(pos, n));
      pos += n;
      for (auto& r : p.TakeRecords()) records.push_back(r);
    }
    p.Finish();
    for (auto& r : p.TakeRecords()) records.push_back(r);
    ASSERT_EQ(records.size(), whole.records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      EXPECT_EQ(records[i].iteration, whole.records[i].iteration);
      EXPECT_EQ(records[i].line, whole.records[i].line);
      EXPECT_EQ(records[i].Get(F::kLoss), whole.records[i].Get(F::kLoss));
    }
    EXPECT_EQ(p.stats().lines, whole.stats.lines);
    EXPECT_EQ(p.TakeEvents().size(), whole.events.size());
  }
  EXPECT_EQ(whole.records.size(), 25u);
  EXPECT_EQ(whole.stats.lines, 53u);
}

TEST(TrainingParserTest, CheckpointEndGetsIterationPathAndDurationFromStart) {
  std::string text =
      "[2025-01-01 10:00:00] saving checkpoint at iteration     100 to /ckpt "
      "in torch_dist format\n"
      "[2025-01-01 10:00:42] successfully saved checkpoint at iteration 100 to "
      "/ckpt\n";
  TrainingLog log = ParseTrainingLog(text);
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[1].type, TrainingEventType::kCheckpointSaveEnd);
  EXPECT_EQ(*log.events[1].iteration, 100);
  EXPECT_EQ(log.events[1].path, "/ckpt");
  EXPECT_DOUBLE_EQ(*log.events[1].duration_s, 42.0);
}

TEST(TrainingParserTest, CriPartialRecordsAreJoined) {
  std::string line = Megatron(7, 10, 2.0);
  line.pop_back();
  std::string text =
      "2025-01-02T03:04:05.000000001Z stdout P " + line.substr(0, 40) + "\n" +
      "2025-01-02T03:04:05.000000002Z stderr F unrelated stderr line\n" +
      "2025-01-02T03:04:05.000000003Z stdout F " + line.substr(40) + "\n";
  TrainingLog log = ParseTrainingLog(text);
  ASSERT_EQ(log.records.size(), 1u);
  EXPECT_EQ(log.records[0].iteration, 7);
  EXPECT_NEAR(*log.records[0].timestamp_s, 1735787045.000000003, 1e-5);
  EXPECT_EQ(*log.records[0].Get(F::kLoss), 2.0);
}

TEST(TrainingParserTest, FluentBitJsonRecordsAreUnwrapped) {
  std::string text =
      R"({"date":1735787045.5,"log":"\u001b[36mstep: 10  \u001b[32mloss:  7.5  memory: 1.5GiB(2.0%)  tps: 1,234  mfu: 1.5%\n","stream":"stdout"})"
      "\n"
      R"({"date":1735787046.5,"message":"step: 11  loss:  7.25  tps: 1,240","stream":"stdout"})"
      "\n";
  TrainingLog log = ParseTrainingLog(text);
  ASSERT_EQ(log.records.size(), 2u);
  EXPECT_EQ(log.records[0].format, TrainingFormat::kTorchTitan);
  EXPECT_EQ(*log.records[0].Get(F::kTokensPerSPerGpu), 1234);
  EXPECT_DOUBLE_EQ(*log.records[0].timestamp_s, 1735787045.5);
  EXPECT_EQ(*log.records[1].Get(F::kLoss), 7.25);
}

TEST(TrainingParserTest, HfDictsTakeTheirStepFromTheProgressBar) {
  std::string text =
      "***** Running training *****\n"
      "  Total optimization steps = 100\n"
      "  0%|          | 0/100 [00:00<?, ?it/s]\r 10%|#         | 10/100 "
      "[00:30<04:30, 3.0s/it]"
      "{'loss': 2.5, 'grad_norm': 1.0, 'learning_rate': 5e-05, 'epoch': 0.1}\n"
      " 10%|#         | 10/100 [00:30<04:30, 3.0s/it]\n"
      "  38%|###8      | 5/13 [00:01<00:02,  4.8it/s]\n"  // an evaluation bar
                                                          // of another size
      "{'eval_loss': 2.6, 'eval_runtime': 1.0, 'epoch': 0.1}\n"
      " 20%|##        | 20/100 [01:00<04:00, 3.0s/it]{'loss': 2.25, 'epoch': "
      "0.2}\n"
      "{'loss': 2.0, 'epoch': 0.21}\n";
  TrainingLog log = ParseTrainingLog(text);
  ASSERT_EQ(log.records.size(), 3u);
  EXPECT_EQ(log.records[0].iteration, 10);
  EXPECT_EQ(*log.records[0].Get(F::kTargetIteration), 100);
  EXPECT_EQ(log.records[1].iteration, 20);
  EXPECT_EQ(log.records[2].iteration, 21);  // no bar: counts on
  EXPECT_EQ(log.stats.unparsed_candidates, 0u);
}

TEST(TrainingParserTest, OversizedLinesAreSkippedWithBoundedMemory) {
  std::string huge(3 << 20, 'x');
  huge.replace(100, 9, "iteration");
  std::string text = Megatron(1, 10, 1.0) + huge + "\n" + Megatron(2, 10, 0.9);
  TrainingLogParser p({.max_line_bytes = 1 << 20});
  for (size_t pos = 0; pos < text.size(); pos += 4096) {
    p.Feed(std::string_view(text).substr(pos, 4096));
  }
  p.Finish();
  EXPECT_EQ(p.TakeRecords().size(), 2u);
  EXPECT_EQ(p.stats().oversized_lines, 1u);
  EXPECT_EQ(p.stats().lines, 3u);
  // The same line in one piece is skipped too.
  TrainingLog whole = ParseTrainingLog(text, {.max_line_bytes = 1 << 20});
  EXPECT_EQ(whole.records.size(), 2u);
  EXPECT_EQ(whole.stats.oversized_lines, 1u);
}

// Lines without any trigger word are counted too, whether they arrive in one
// chunk, split over many, or as several in one chunk.
TEST(TrainingParserTest, OversizedLinesWithoutTriggerWordsAreCounted) {
  std::string plain(2 << 20, 'y');
  std::string text = Megatron(1, 10, 1.0) + plain + "\n" + plain + "\n" +
                     Megatron(2, 10, 0.9) + plain + "\n";
  for (size_t chunk : {size_t{4096}, size_t{1} << 20, text.size()}) {
    TrainingLogParser p({.max_line_bytes = 1 << 20});
    for (size_t pos = 0; pos < text.size(); pos += chunk)
      p.Feed(std::string_view(text).substr(pos, chunk));
    p.Finish();
    EXPECT_EQ(p.TakeRecords().size(), 2u) << "chunk " << chunk;
    EXPECT_EQ(p.stats().oversized_lines, 3u) << "chunk " << chunk;
    EXPECT_EQ(p.stats().lines, 5u) << "chunk " << chunk;
  }
}

TEST(TrainingParserTest, UnparsedCandidatesAreCountedWithAnExample) {
  std::string text =
      Log(1, 2) +
      " iteration        3/     100 | consumed samples:  768 | lm loss 4.1 | "
      "grad norm: 0.5 | loss scale: 1.0 | elapsed time per iteration (ms): x "
      "|\n" +
      " iteration 4/ | consumed samples: 1024 | lm loss: 4.0 | grad norm: 0.4 "
      "|\n";
  TrainingLog log = ParseTrainingLog(text);
  // Line 3 gives a record with what did parse and still counts as a candidate
  // (two of its fields are malformed); line 4 gives nothing.
  EXPECT_EQ(log.records.size(), 3u);
  EXPECT_FALSE(log.records[2].Has(F::kLoss));
  EXPECT_FALSE(log.records[2].Has(F::kElapsedMs));
  EXPECT_EQ(*log.records[2].Get(F::kGradNorm), 0.5);
  EXPECT_EQ(log.stats.unparsed_candidates, 2u);
  EXPECT_NE(log.stats.unparsed_example.find("iteration        3/"),
            std::string::npos);
}

TEST(TrainingParserTest, DuplicateEventsFromRanksAreDropped) {
  std::string text;
  for (int rank = 0; rank < 4; ++rank) {
    text += std::to_string(rank) + ": step: 10  loss:  2.0  tps: 100\n";
  }
  for (int rank = 0; rank < 4; ++rank) {
    text += std::to_string(rank) +
            ": 2025-01-01 00:00:00,000 - root - INFO - Saving the checkpoint "
            "(or staging if async is enabled).\n";
  }
  for (int rank = 0; rank < 4; ++rank) {
    text += std::to_string(rank) +
            ": 2025-01-01 00:00:03,000 - root - INFO - [GC] Finished saving "
            "the checkpoint (or staging if async is enabled)in 3.00 seconds.\n";
  }
  TrainingLog log = ParseTrainingLog(text);
  EXPECT_EQ(log.records.size(), 1u);
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(*log.events[0].iteration, 10);
  EXPECT_DOUBLE_EQ(*log.events[1].duration_s, 3.0);
}

TEST(TrainingParserTest, ParseFileReportsMissingFileAndDirectory) {
  auto missing = ParseTrainingLogFile("/nonexistent/lens/train.log");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/lens/train.log"),
            std::string::npos);
  auto dir = ParseTrainingLogFile("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), StatusCode::kInvalidArgument);
}

TEST(TrainingSummaryTest, PercentilesLossesAndCounters) {
  std::string text = "training ...\n";
  for (int i = 1; i <= 10; ++i)
    text += Megatron(i, 10, i == 5 ? NAN : 10.0 - i);
  text +=
      "saving checkpoint at iteration 10 to /c\n[after training is done] "
      "datetime: x\n";
  auto runs = SummarizeTrainingLog(ParseTrainingLog(text));
  ASSERT_EQ(runs.size(), 1u);
  const RunSummary& s = runs[0];
  EXPECT_EQ(s.iterations, 10u);
  EXPECT_EQ(*s.first_loss, 9.0);
  EXPECT_EQ(*s.last_loss, 0.0);
  EXPECT_EQ(s.nan_loss_records, 1u);
  EXPECT_EQ(s.checkpoints, 1u);
  EXPECT_TRUE(s.ended);
  // elapsed = 1000 + i % 7 for i = 1..10: {1001..1006, 1000, 1001, 1002, 1003}
  EXPECT_EQ(*s.step_ms_p50, 1002.0);
  EXPECT_EQ(*s.step_ms_p90, 1005.0);
  EXPECT_EQ(*s.step_ms_p10, 1000.0);
}

}  // namespace
}  // namespace lens

namespace lens {
namespace {

// Found by the fuzzer: a garbled count must not overflow the summary's
// integers.
TEST(TrainingSummaryTest, HugeCountsAreClamped) {
  TrainingLog log = ParseTrainingLog(
      " iteration 5/ 10 | lm loss: 1.0 | number of nan iterations: 6.7e120 | "
      "number of skipped "
      "iterations: -3 |\n");
  ASSERT_EQ(log.records.size(), 1u);
  auto runs = SummarizeTrainingLog(log);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].nan_iterations, UINT64_MAX);
  EXPECT_EQ(runs[0].skipped_iterations, 0u);
}

}  // namespace
}  // namespace lens
