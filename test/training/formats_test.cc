// One test per format: a real-shaped line in, typed fields out; absent fields
// stay absent.
#include "training/formats.h"

#include <gtest/gtest.h>

#include <cmath>

#include "training/line.h"

namespace lens::training {
namespace {

using F = IterationField;

LineResult Parse(std::string_view line) {
  LinePrefix prefix;
  ParsePrefix(line, &prefix);
  LineResult out;
  Scratch scratch;
  ParseLine(line, prefix, &out, &scratch);
  return out;
}

double Get(const IterationRecord& r, F f) {
  EXPECT_TRUE(r.Has(f)) << static_cast<int>(f);
  return r.Get(f).value_or(-1);
}

// Primus since 2025-12-27 rewrites Megatron's line (print_rank_last patch,
// AMD-AGI/Primus @ 2046b02a): no trailing '|', "X (avg Y)" throughput,
// "tokens/s/GPU inst/harmonic mean", memory segments last with the rank using
// the most memory as part of the key. Shape from the format strings.
TEST(PrimusFormatTest, Parses2026FieldsWithTheRankAsAValue) {
  LineResult r = Parse(
      "[2026-08-12 08:40:22] iteration        2/      50 | consumed samples:  "
      "        256 | elapsed time per iteration (ms): 6046.6/6012.4 | compute "
      "per GPU (TFLOP/s/GPU): 1255.4 (avg 1249.8)  | tokens/s/GPU "
      "inst/harmonic mean: 2709.6/2697.1 | learning rate: 1.000000E-05 | "
      "global batch size:   128 | lm loss: 1.189062E+01 | loss scale: 1.0 | "
      "grad norm: 7.499 | number of skipped iterations:   0 | number of nan "
      "iterations:   0 | hip mem usage/free/total/usage_ratio: "
      "153.81GB/102.17GB/255.98GB/60.09%  | rocm mem usage/free/total/"
      "usage_ratio: 160.02GB/95.96GB/255.98GB/62.51% | rank-3 rocm max mem "
      "usage/usage_ratio: 161.50GB/63.09%");
  ASSERT_EQ(r.kind, LineKind::kRecord);
  EXPECT_FALSE(r.malformed);
  const IterationRecord& rec = r.record;
  EXPECT_EQ(rec.iteration, 2);
  EXPECT_DOUBLE_EQ(Get(rec, F::kTflopsPerGpu), 1255.4);
  EXPECT_DOUBLE_EQ(Get(rec, F::kTflopsPerGpuAvg), 1249.8);
  EXPECT_DOUBLE_EQ(Get(rec, F::kTokensPerSPerGpu), 2709.6);
  EXPECT_DOUBLE_EQ(Get(rec, F::kTokensPerSPerGpuAvg), 2697.1);
  EXPECT_DOUBLE_EQ(Get(rec, F::kElapsedMsAvg), 6012.4);
  EXPECT_EQ(Get(rec, F::kMaxMemRank), 3);
  EXPECT_DOUBLE_EQ(Get(rec, F::kMaxMemUsedGb), 161.50);
  EXPECT_DOUBLE_EQ(Get(rec, F::kMaxMemUsageRatio), 0.6309);
  EXPECT_DOUBLE_EQ(Get(rec, F::kMemUsedGb), 160.02);  // rocm's, printed last
  EXPECT_TRUE(rec.extra.empty()) << rec.extra.front().first;
  // The 2025-12 form: "rank-N max mem usage/usage_ratio" in GiB, no space
  // before "(avg".
  LineResult old = Parse(
      " iteration       20/    5000 | compute per GPU (TFLOP/s/GPU): "
      "567.6(avg 568.0) | rank-12 max mem usage/usage_ratio: 150.20GiB/58.68% "
      "| lm loss: 6.5E-03 |");
  ASSERT_EQ(old.kind, LineKind::kRecord);
  EXPECT_FALSE(old.malformed);
  EXPECT_DOUBLE_EQ(Get(old.record, F::kTflopsPerGpuAvg), 568.0);
  EXPECT_EQ(Get(old.record, F::kMaxMemRank), 12);
  EXPECT_DOUBLE_EQ(Get(old.record, F::kMaxMemUsedGb), 150.20);
  EXPECT_TRUE(old.record.extra.empty());
}

TEST(MegatronFormatTest, ParsesCurrentMegatronLine) {
  LineResult r = Parse(
      " [2025-02-11 09:12:44] iteration      200/  500000 | consumed samples:  "
      "     102400 | "
      "elapsed time per iteration (ms): 2035.6 | throughput per GPU "
      "(TFLOP/s/GPU): 412.7 | "
      "learning rate: 1.500000E-04 | global batch size:   512 | lm loss: "
      "6.385417E+00 | "
      "loss scale: 1.0 | grad norm: 1.234 | num zeros: 0.0 | params norm: "
      "262.447 | "
      "number of skipped iterations:   0 | number of nan iterations:   0 |");
  ASSERT_EQ(r.kind, LineKind::kRecord);
  const IterationRecord& rec = r.record;
  EXPECT_EQ(rec.format, TrainingFormat::kMegatron);
  EXPECT_EQ(rec.iteration, 200);
  EXPECT_EQ(Get(rec, F::kTargetIteration), 500000);
  EXPECT_EQ(Get(rec, F::kConsumedSamples), 102400);
  EXPECT_DOUBLE_EQ(Get(rec, F::kElapsedMs), 2035.6);
  EXPECT_DOUBLE_EQ(Get(rec, F::kTflopsPerGpu), 412.7);
  EXPECT_DOUBLE_EQ(Get(rec, F::kLearningRate), 1.5e-4);
  EXPECT_DOUBLE_EQ(Get(rec, F::kLoss), 6.385417);
  EXPECT_DOUBLE_EQ(Get(rec, F::kParamsNorm), 262.447);
  EXPECT_EQ(Get(rec, F::kNumZeros), 0);
  EXPECT_FALSE(rec.Has(F::kTokensPerSPerGpu));
  EXPECT_FALSE(rec.Has(F::kMemUsedGb));
  EXPECT_FALSE(rec.Has(F::kElapsedMsAvg));
  EXPECT_TRUE(rec.extra.empty());
}

TEST(MegatronFormatTest, OldLineWithoutLossLeavesLossAbsent) {
  LineResult r = Parse(
      " iteration       10/    1000 | consumed samples:           40 | elapsed "
      "time per "
      "iteration (ms): 3171.3 | learning rate: 0.000E+00 | global batch size:  "
      "   4 | loss "
      "scale: 8388608.0 | number of skipped iterations:  10 | number of nan "
      "iterations:   0 |");
  ASSERT_EQ(r.kind, LineKind::kRecord);
  EXPECT_FALSE(r.record.Has(F::kLoss));
  EXPECT_FALSE(r.record.Has(F::kGradNorm));
  EXPECT_EQ(Get(r.record, F::kSkippedIterations), 10);
  EXPECT_EQ(Get(r.record, F::kLossScale), 8388608.0);
  EXPECT_EQ(Get(r.record, F::kLearningRate), 0.0);
}

TEST(MegatronFormatTest, PrimusPairsAndMemoryQuad) {
  LineResult r = Parse(
      "[20251023 12:39:12][rank-63/64][INFO ] [--------trainer.py:2382] :  "
      "iteration      "
      "424/   40000 | consumed samples:        27136 | elapsed time per "
      "iteration (ms): "
      "16601.3/17219.3 | rocm mem usage/free/total/usage_ratio: "
      "253.38GB/2.60GB/255.98GB/98.98% "
      "| throughput per GPU (TFLOP/s/GPU): 11.9/11.5 | tokens per GPU "
      "(tokens/s/GPU): "
      "246.7/238.1 | learning rate: 9.997254E-06 | global batch size:    64 | "
      "lm loss: "
      "4.447942E+00 | loss scale: 1.0 | grad norm: 6.142 | number of skipped "
      "iterations:   0 | "
      "number of nan iterations:   0 |");
  ASSERT_EQ(r.kind, LineKind::kRecord);
  const IterationRecord& rec = r.record;
  EXPECT_EQ(rec.format, TrainingFormat::kPrimus);
  EXPECT_EQ(*rec.rank, 63);
  EXPECT_EQ(*rec.world_size, 64);
  EXPECT_DOUBLE_EQ(Get(rec, F::kElapsedMs), 16601.3);
  EXPECT_DOUBLE_EQ(Get(rec, F::kElapsedMsAvg), 17219.3);
  EXPECT_DOUBLE_EQ(Get(rec, F::kTflopsPerGpuAvg), 11.5);
  EXPECT_DOUBLE_EQ(Get(rec, F::kTokensPerSPerGpu), 246.7);
  EXPECT_DOUBLE_EQ(Get(rec, F::kMemUsedGb), 253.38);
  EXPECT_DOUBLE_EQ(Get(rec, F::kMemFreeGb), 2.60);
  EXPECT_DOUBLE_EQ(Get(rec, F::kMemTotalGb), 255.98);
  EXPECT_NEAR(Get(rec, F::kMemUsageRatio), 0.9898, 1e-12);
  // Exactly the printed decimal, so JSON output reads 0.9898.
  EXPECT_EQ(Get(rec, F::kMemUsageRatio), 0.9898);
  EXPECT_FALSE(rec.Has(F::kNumZeros));
}

TEST(MegatronFormatTest, KeyValueVariantWithNanLoss) {
  LineResult r = Parse(
      "    [2024-06-21 10:50:42][INFO][training:1609] -  iteration=  136004/  "
      "136100 | "
      "consumed_samples=   104451072 | consumed_tokens= 427831590912 | "
      "elapsed_time_per_iteration_ms=3712.5 | learning_rate=3e-05 | "
      "global_batch_size=  768 | "
      "lm loss=nan | loss_scale=1.0 | actual_seqlen= 4096 | "
      "number_of_skipped_iterations=  0 | "
      "number_of_nan_iterations=  1 | samples_per_second=206.867 | "
      "tokens_per_gpu_per_second_tgs=35302.7 | [LM]-TFLOPs=198.05 | "
      "[DS]-TFLOPs=191.2 |");
  ASSERT_EQ(r.kind, LineKind::kRecord);
  const IterationRecord& rec = r.record;
  EXPECT_EQ(rec.iteration, 136004);
  EXPECT_EQ(Get(rec, F::kTargetIteration), 136100);
  EXPECT_EQ(Get(rec, F::kConsumedTokens), 427831590912.0);
  EXPECT_TRUE(std::isnan(Get(rec, F::kLoss)));
  EXPECT_EQ(Get(rec, F::kNanIterations), 1);
  EXPECT_DOUBLE_EQ(Get(rec, F::kTokensPerSPerGpu), 35302.7);
  EXPECT_DOUBLE_EQ(Get(rec, F::kTflopsPerGpu), 198.05);
  EXPECT_DOUBLE_EQ(Get(rec, F::kSamplesPerS), 206.867);
  EXPECT_EQ(Get(rec, F::kActualSeqlen), 4096);
  ASSERT_EQ(rec.extra.size(), 1u);
  EXPECT_EQ(rec.extra[0].first, "ds tflops");
  EXPECT_DOUBLE_EQ(rec.extra[0].second, 191.2);
}

TEST(MegatronFormatTest, DeepSpeedPipeVariantFieldNames) {
  LineResult r = Parse(
      " iteration     1000/  292968 | consumed samples:       512000 | "
      "consumed tokens:   "
      "1048576000 | elapsed time per iteration (ms): 15220.8 | learning rate: "
      "5.999E-05 | "
      "global batch size:   512 | lm-loss: 2.934861E+00 | loss scale: 65536.0 "
      "| grad norm: "
      "0.377 | actual seqlen:  2048 | number of skipped iterations:   0 | "
      "number of nan "
      "iterations:   0 | samples per second: 33.638 | TFLOPs: 142.21 | tokens "
      "per gpu per "
      "second (tgs): 1076.43 |");
  ASSERT_EQ(r.kind, LineKind::kRecord);
  EXPECT_DOUBLE_EQ(Get(r.record, F::kLoss), 2.934861);
  EXPECT_DOUBLE_EQ(Get(r.record, F::kTflopsPerGpu), 142.21);
  EXPECT_DOUBLE_EQ(Get(r.record, F::kTokensPerSPerGpu), 1076.43);
  EXPECT_DOUBLE_EQ(Get(r.record, F::kSamplesPerS), 33.638);
}

TEST(NeMoFormatTest, UsesGlobalStepAndConvertsSeconds) {
  LineResult r = Parse(
      "(pretraining, pid=4112) Training epoch 1, iteration 10/999 | lr: "
      "4.498e-06 | "
      "global_batch_size: 512 | global_step: 29 | reduced_train_loss: 11.03 | "
      "train_step_timing in s: 46.84 | consumed_samples: 15360");
  ASSERT_EQ(r.kind, LineKind::kRecord);
  const IterationRecord& rec = r.record;
  EXPECT_EQ(rec.format, TrainingFormat::kNeMo);
  EXPECT_EQ(rec.iteration, 29);
  EXPECT_FALSE(rec.Has(F::kTargetIteration));
  EXPECT_EQ(Get(rec, F::kEpoch), 1);
  EXPECT_DOUBLE_EQ(Get(rec, F::kElapsedMs), 46840);
  EXPECT_DOUBLE_EQ(Get(rec, F::kLoss), 11.03);
  EXPECT_DOUBLE_EQ(Get(rec, F::kLearningRate), 4.498e-06);
  EXPECT_EQ(Get(rec, F::kConsumedSamples), 15360);
}

TEST(TorchTitanFormatTest, ParsesStepLineWithGroupingAndPercentages) {
  LineResult r = Parse(
      "1: 2025-03-04 00:44:44,441 - root - INFO - step: 1990  loss:  3.4370  "
      "grad_norm:  "
      "0.2714  memory: 68.57GiB(86.69%)  tps: 16,785  tflops: 389.12  mfu: "
      "39.73%");
  ASSERT_EQ(r.kind, LineKind::kRecord);
  const IterationRecord& rec = r.record;
  EXPECT_EQ(rec.format, TrainingFormat::kTorchTitan);
  EXPECT_EQ(rec.iteration, 1990);
  EXPECT_EQ(*rec.rank, 1);
  EXPECT_DOUBLE_EQ(Get(rec, F::kLoss), 3.437);
  EXPECT_DOUBLE_EQ(Get(rec, F::kGradNorm), 0.2714);
  EXPECT_DOUBLE_EQ(Get(rec, F::kMemUsedGb), 68.57);
  EXPECT_NEAR(Get(rec, F::kMemUsageRatio), 0.8669, 1e-12);
  EXPECT_EQ(Get(rec, F::kTokensPerSPerGpu), 16785);
  EXPECT_DOUBLE_EQ(Get(rec, F::kTflopsPerGpu), 389.12);
  EXPECT_NEAR(Get(rec, F::kMfu), 0.3973, 1e-12);
}

TEST(DeepSpeedFormatTest, StepAndTimerLines) {
  LineResult r = Parse(
      "[2023-04-18 01:46:59,142] [INFO] [logging.py:96:log_dist] [Rank 0] "
      "step=10, skipped=6, "
      "lr=[9.649992967150629e-06, 9.649992967150629e-06], mom=[(0.9, 0.95), "
      "(0.9, 0.95)]");
  ASSERT_EQ(r.kind, LineKind::kRecord);
  EXPECT_EQ(r.record.format, TrainingFormat::kDeepSpeed);
  EXPECT_EQ(r.record.iteration, 10);
  EXPECT_EQ(Get(r.record, F::kSkippedIterations), 6);
  EXPECT_DOUBLE_EQ(Get(r.record, F::kLearningRate), 9.649992967150629e-06);
  LineResult t = Parse(
      "[2023-04-18 01:46:59,171] [INFO] [timer.py:199:stop] "
      "epoch=0/micro_step=10/"
      "global_step=10, RunningAvgSamplesPerSec=173.4455644119137, "
      "CurrSamplesPerSec=171.97903593624417, MemAllocated=3.96GB, "
      "MaxMemAllocated=22.95GB");
  ASSERT_EQ(t.kind, LineKind::kRecord);
  EXPECT_EQ(t.record.iteration, 10);
  EXPECT_DOUBLE_EQ(Get(t.record, F::kSamplesPerS), 171.97903593624417);
  EXPECT_DOUBLE_EQ(Get(t.record, F::kMemUsedGb), 3.96);
  EXPECT_DOUBLE_EQ(Get(t.record, F::kMemMaxAllocatedGb), 22.95);
  EXPECT_EQ(Get(t.record, F::kEpoch), 0);
}

TEST(HfTrainerFormatTest, LossDictIsRecordWithoutStep) {
  LineResult r = Parse(
      "{'loss': 2.5586, 'grad_norm': 6.847109794616699, 'learning_rate': "
      "5e-05, 'epoch': 0.01, "
      "'num_input_tokens_seen': 196608}");
  ASSERT_EQ(r.kind, LineKind::kRecord);
  EXPECT_FALSE(r.iteration_known);
  EXPECT_DOUBLE_EQ(Get(r.record, F::kLoss), 2.5586);
  EXPECT_DOUBLE_EQ(Get(r.record, F::kEpoch), 0.01);
  EXPECT_EQ(Get(r.record, F::kConsumedTokens), 196608);
}

TEST(HfTrainerFormatTest,
     EvalDictIsAValidationNotARecordAndFinalDictEndsTraining) {
  LineResult eval = Parse(
      "{'eval_loss': 2.31, 'eval_runtime': 3.2, "
      "'eval_samples_per_second': 31.2, 'epoch': 1.0}");
  ASSERT_EQ(eval.kind, LineKind::kValidation);
  EXPECT_EQ(eval.validation.loss, 2.31);
  EXPECT_FALSE(eval.validation_iteration_known);
  LineResult end = Parse(
      "{'train_runtime': 412.5, 'train_samples_per_second': 5.8, "
      "'train_steps_per_second': "
      "0.24, 'train_loss': 2.49, 'epoch': 1.0}");
  ASSERT_EQ(end.kind, LineKind::kEvent);
  EXPECT_EQ(end.event.type, TrainingEventType::kTrainingEnd);
}

TEST(ProgressTest, TqdmBarGivesStepAndTotal) {
  LineResult r = Parse(" 12%|#2        | 12/100 [00:40<04:55,  3.36s/it]");
  ASSERT_EQ(r.kind, LineKind::kProgress);
  EXPECT_EQ(r.progress, 12);
  EXPECT_EQ(r.progress_total, 100);
  LineResult t =
      Parse("[INFO|trainer.py:2314] >>   Total optimization steps = 1,000");
  ASSERT_EQ(t.kind, LineKind::kTotalSteps);
  EXPECT_EQ(t.progress_total, 1000);
}

TEST(EventFormatTest, CheckpointAndLifecycleEvents) {
  LineResult a = Parse(
      "saving checkpoint at iteration     100 to /ckpt/gpt in torch_dist "
      "format");
  ASSERT_EQ(a.kind, LineKind::kEvent);
  EXPECT_EQ(a.event.type, TrainingEventType::kCheckpointSaveStart);
  EXPECT_EQ(*a.event.iteration, 100);
  EXPECT_EQ(a.event.path, "/ckpt/gpt");
  LineResult b = Parse(
      "  successfully saved checkpoint from iteration     100 to /ckpt/gpt [ t "
      "1/8, p 1/1 ]");
  ASSERT_EQ(b.kind, LineKind::kEvent);
  EXPECT_EQ(b.event.type, TrainingEventType::kCheckpointSaveEnd);
  EXPECT_EQ(b.event.path, "/ckpt/gpt");
  LineResult c = Parse(
      "[NeMo I 2025-05-22 20:09:41 model_checkpoint:522] Async checkpoint save "
      "for step 19 "
      "(/mnt/ckpt/step=19.ckpt) finalized successfully.");
  ASSERT_EQ(c.kind, LineKind::kEvent);
  EXPECT_EQ(*c.event.iteration, 19);
  EXPECT_EQ(c.event.path, "/mnt/ckpt/step=19.ckpt");
  LineResult d = Parse(
      "[rank0]:[titan] 2025-01-01 00:00:00,000 - root - INFO - [GC] Finished "
      "saving the "
      "checkpoint (or staging if async is enabled)in 3.21 seconds.");
  ASSERT_EQ(d.kind, LineKind::kEvent);
  EXPECT_DOUBLE_EQ(*d.event.duration_s, 3.21);
  EXPECT_EQ(Parse("training ...").event.type,
            TrainingEventType::kTrainingStart);
  EXPECT_EQ(
      Parse("[after training is done] datetime: 2021-05-23 09:00:00").kind,
      LineKind::kEvent);
  EXPECT_EQ(Parse("training ... done").kind, LineKind::kNothing);
}

TEST(CandidateTest, MalformedMetricLinesAreCandidatesNoiseIsNot) {
  EXPECT_EQ(Parse(" iteration 424/ | consumed samples: 27136 | lm loss: 4.4 | "
                  "grad norm: 1.0")
                .kind,
            LineKind::kCandidate);
  EXPECT_EQ(Parse("[2024-06-21 10:50:42] [Rank 0] time (ms) | fwd: 25341.72 | "
                  "bwd: 77707.38 | "
                  "step: 2218.38")
                .kind,
            LineKind::kNothing);
  EXPECT_EQ(Parse("  lr_warmup_steps ................................. 0").kind,
            LineKind::kNothing);
}

}  // namespace
}  // namespace lens::training
