#include <algorithm>
#include <cmath>

#include "lens/training.h"

namespace lens {
namespace {

// Nearest-rank percentile of an unsorted vector (sorted in place).
std::optional<double> Percentile(std::vector<double>* v, double p) {
  if (v->empty()) return std::nullopt;
  size_t idx =
      static_cast<size_t>(std::ceil(p * static_cast<double>(v->size())));
  idx = std::clamp<size_t>(idx, 1, v->size()) - 1;
  std::nth_element(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(idx),
                   v->end());
  return (*v)[idx];
}

// A count printed by a log, clamped into uint64 (a garbled line may print
// 1e120).
uint64_t ToCount(double v) {
  if (!(v > 0)) return 0;
  return v >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(v);
}

}  // namespace

struct TrainingSummaryBuilder::RunAcc {
  RunSummary s;
  std::vector<double> step_ms, tflops, tokens;
  uint64_t checkpoint_starts = 0, checkpoint_ends = 0;
  bool skipped_is_total = false;
  uint64_t skipped_last = 0;
};

TrainingSummaryBuilder::TrainingSummaryBuilder() = default;
TrainingSummaryBuilder::~TrainingSummaryBuilder() = default;

TrainingSummaryBuilder::RunAcc* TrainingSummaryBuilder::Run(int32_t run) {
  for (auto& r : runs_) {
    if (r->s.run == run) return r.get();
  }
  runs_.push_back(std::make_unique<RunAcc>());
  runs_.back()->s.run = run;
  return runs_.back().get();
}

void TrainingSummaryBuilder::Add(const IterationRecord& r) {
  RunAcc* acc = Run(r.run);
  RunSummary& s = acc->s;
  if (s.iterations == 0)
    s.format = r.format;  // records name the format better than events
  ++s.iterations;
  if (!s.first_iteration) s.first_iteration = r.iteration;
  s.last_iteration = r.iteration;
  if (auto t = r.Get(IterationField::kTargetIteration)) {
    if (*t >= 0 && *t < 9.2e18) s.target_iteration = static_cast<int64_t>(*t);
  }
  auto finite = [](std::optional<double> v) { return v && std::isfinite(*v); };
  if (auto v = r.Get(IterationField::kElapsedMs); finite(v))
    acc->step_ms.push_back(*v);
  if (auto v = r.Get(IterationField::kTflopsPerGpu); finite(v))
    acc->tflops.push_back(*v);
  if (auto v = r.Get(IterationField::kTokensPerSPerGpu); finite(v))
    acc->tokens.push_back(*v);
  if (auto loss = r.Get(IterationField::kLoss)) {
    if (std::isfinite(*loss)) {
      if (!s.first_loss) s.first_loss = *loss;
      s.last_loss = *loss;
    } else {
      ++s.nan_loss_records;
    }
  }
  if (auto v = r.Get(IterationField::kNanIterations); finite(v) && *v > 0) {
    s.nan_iterations += ToCount(*v);
  }
  if (auto v = r.Get(IterationField::kSkippedIterations);
      finite(v) && *v >= 0) {
    // DeepSpeed prints a running total; Megatron prints the count in the
    // logging interval.
    if (r.format == TrainingFormat::kDeepSpeed) {
      acc->skipped_is_total = true;
      acc->skipped_last = ToCount(*v);
    } else {
      s.skipped_iterations += ToCount(*v);
    }
  }
}

void TrainingSummaryBuilder::Add(const TrainingEvent& e) {
  RunAcc* acc = Run(e.run);
  switch (e.type) {
    case TrainingEventType::kCheckpointSaveStart:
      ++acc->checkpoint_starts;
      break;
    case TrainingEventType::kCheckpointSaveEnd:
      ++acc->checkpoint_ends;
      break;
    case TrainingEventType::kTrainingEnd:
      acc->s.ended = true;
      break;
    case TrainingEventType::kTrainingStart:
      break;
  }
  if (acc->s.format == TrainingFormat::kUnknown) acc->s.format = e.format;
}

std::vector<RunSummary> TrainingSummaryBuilder::Build() const {
  std::vector<RunSummary> out;
  for (const auto& acc : runs_) {
    RunSummary s = acc->s;
    std::vector<double> step = acc->step_ms, tflops = acc->tflops,
                        tokens = acc->tokens;
    s.step_ms_p10 = Percentile(&step, 0.10);
    s.step_ms_p50 = Percentile(&step, 0.50);
    s.step_ms_p90 = Percentile(&step, 0.90);
    s.tflops_per_gpu_p50 = Percentile(&tflops, 0.50);
    s.tokens_per_s_per_gpu_p50 = Percentile(&tokens, 0.50);
    s.checkpoints = acc->checkpoint_ends > 0 ? acc->checkpoint_ends
                                             : acc->checkpoint_starts;
    if (acc->skipped_is_total) s.skipped_iterations += acc->skipped_last;
    out.push_back(s);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.run < b.run; });
  return out;
}

std::vector<RunSummary> SummarizeTrainingLog(const TrainingLog& log) {
  TrainingSummaryBuilder b;
  for (const auto& r : log.records) b.Add(r);
  for (const auto& e : log.events) b.Add(e);
  return b.Build();
}

}  // namespace lens
