// Names and descriptions of the public training types (tables, not code).
#include <array>

#include "lens/training.h"

namespace lens {
namespace {

using F = IterationField;

constexpr IterationFieldInfo kFields[] = {
    {F::kTargetIteration, "target_iteration", true,
     "total iterations of the run (N/ M: M)"},
    {F::kEpoch, "epoch", false, "epoch (fractional for HF Trainer)"},
    {F::kConsumedSamples, "consumed_samples", true, "samples consumed so far"},
    {F::kConsumedTokens, "consumed_tokens", true, "tokens consumed so far"},
    {F::kElapsedMs, "elapsed_ms", false, "wall time of the iteration, ms"},
    {F::kElapsedMsAvg, "elapsed_ms_avg", false,
     "Primus X/Y second value: average ms"},
    {F::kLearningRate, "learning_rate", false, "learning rate"},
    {F::kGlobalBatchSize, "global_batch_size", true,
     "global batch size, samples"},
    {F::kLoss, "loss", false, "language-model training loss"},
    {F::kLossScale, "loss_scale", false, "mixed-precision loss scale"},
    {F::kGradNorm, "grad_norm", false, "gradient norm"},
    {F::kParamsNorm, "params_norm", false, "parameter norm"},
    {F::kNumZeros, "num_zeros", true, "number of zero gradients"},
    {F::kSkippedIterations, "skipped_iterations", true, "skipped iterations"},
    {F::kNanIterations, "nan_iterations", true, "NaN iterations"},
    {F::kTflopsPerGpu, "tflops_per_gpu", false, "model TFLOP/s per GPU"},
    {F::kTflopsPerGpuAvg, "tflops_per_gpu_avg", false,
     "Primus X/Y or X (avg Y): Y, the running mean"},
    {F::kTokensPerSPerGpu, "tokens_per_s_per_gpu", false,
     "tokens per second per GPU"},
    {F::kTokensPerSPerGpuAvg, "tokens_per_s_per_gpu_avg", false,
     "Primus X/Y: Y, the running (harmonic) mean"},
    {F::kSamplesPerS, "samples_per_s", false, "samples per second"},
    {F::kMfu, "mfu", false, "model FLOPs utilisation, 0..1"},
    {F::kActualSeqlen, "actual_seqlen", true, "actual sequence length, tokens"},
    {F::kMemUsedGb, "mem_used_gb", false, "device memory used, GB as printed"},
    {F::kMemFreeGb, "mem_free_gb", false, "device memory free, GB as printed"},
    {F::kMemTotalGb, "mem_total_gb", false,
     "device memory total, GB as printed"},
    {F::kMemUsageRatio, "mem_usage_ratio", false,
     "device memory used / total, 0..1"},
    {F::kMemMaxAllocatedGb, "mem_max_allocated_gb", false,
     "peak allocated memory, GB"},
    {F::kMaxMemRank, "max_mem_rank", true,
     "rank using the most device memory (Primus)"},
    {F::kMaxMemUsedGb, "max_mem_used_gb", false,
     "that rank's device memory used, GB as printed"},
    {F::kMaxMemUsageRatio, "max_mem_usage_ratio", false,
     "that rank's device memory used / total, 0..1"},
};
static_assert(std::size(kFields) == static_cast<size_t>(F::kCount),
              "one entry per field");

constexpr bool FieldsInOrder() {
  for (size_t i = 0; i < std::size(kFields); ++i) {
    if (static_cast<size_t>(kFields[i].field) != i) return false;
  }
  return true;
}
static_assert(FieldsInOrder(), "kFields must follow IterationField's order");

}  // namespace

std::span<const IterationFieldInfo> IterationFields() { return kFields; }

std::string_view TrainingFormatName(TrainingFormat format) {
  switch (format) {
    case TrainingFormat::kUnknown:
      return "unknown";
    case TrainingFormat::kMegatron:
      return "megatron";
    case TrainingFormat::kPrimus:
      return "primus";
    case TrainingFormat::kTorchTitan:
      return "torchtitan";
    case TrainingFormat::kNeMo:
      return "nemo";
    case TrainingFormat::kHfTrainer:
      return "hf_trainer";
    case TrainingFormat::kDeepSpeed:
      return "deepspeed";
  }
  return "unknown";
}

std::string_view EvaluationSplitName(EvaluationSplit split) {
  return split == EvaluationSplit::kTest ? "test" : "validation";
}

std::string_view TrainingEventTypeName(TrainingEventType type) {
  switch (type) {
    case TrainingEventType::kTrainingStart:
      return "training_start";
    case TrainingEventType::kCheckpointSaveStart:
      return "checkpoint_save_start";
    case TrainingEventType::kCheckpointSaveEnd:
      return "checkpoint_save_end";
    case TrainingEventType::kTrainingEnd:
      return "training_end";
  }
  return "unknown";
}

}  // namespace lens
