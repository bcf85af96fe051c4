// Per-run summaries, built incrementally with bounded memory.
#include <algorithm>
#include <cmath>
#include <deque>
#include <map>

#include "lens/training.h"

namespace lens {
namespace {

// A count printed by a log, clamped into uint64 (a garbled line may print
// 1e120).
uint64_t ToCount(double v) {
  if (!(v > 0)) return 0;
  return v >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(v);
}

// The values of one metric in one run, for nearest-rank percentiles: exact up
// to kExact values, then a histogram of logarithmic buckets whose
// representative value is within kAlpha of every value in it (the DDSketch
// construction), so memory stays bounded however long the run is.
class Samples {
 public:
  void Add(double v) {
    if (buckets_.empty() && exact_.size() < kExact) {
      exact_.push_back(v);
      return;
    }
    if (buckets_.empty()) {
      for (double x : exact_) ++buckets_[Key(x)];
      exact_ = {};
    }
    ++buckets_[Key(v)];
    ++count_;
  }

  std::optional<double> Percentile(double p) const {
    const size_t n = buckets_.empty() ? exact_.size() : count_ + kExact;
    if (n == 0) return std::nullopt;
    size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(n)));
    rank = std::clamp<size_t>(rank, 1, n);
    if (buckets_.empty()) {
      std::vector<double> v = exact_;
      auto nth = v.begin() + static_cast<std::ptrdiff_t>(rank - 1);
      std::nth_element(v.begin(), nth, v.end());
      return *nth;
    }
    size_t seen = 0;
    for (const auto& [key, count] : buckets_) {
      seen += count;
      if (seen >= rank) return Value(key);
    }
    return Value(buckets_.rbegin()->first);
  }

 private:
  static constexpr size_t kExact = 256;
  static constexpr double kAlpha = 0.005;
  static constexpr double kGamma = (1 + kAlpha) / (1 - kAlpha);
  static constexpr int32_t kOffset = 100000;  // keys of positive values

  // Monotonic in v: negative values below 0, 0 itself, positive above.
  static int32_t Key(double v) {
    if (v == 0) return 0;
    const double k = std::ceil(std::log(std::fabs(v)) / std::log(kGamma));
    const int32_t i = kOffset + static_cast<int32_t>(std::clamp(k, -9e4, 9e4));
    return v > 0 ? i : -i;
  }
  static double Value(int32_t key) {
    if (key == 0) return 0;
    const double k = std::abs(key) - kOffset;
    const double v = 2 * std::pow(kGamma, k) / (kGamma + 1);
    return key > 0 ? v : -v;
  }

  std::vector<double> exact_;
  std::map<int32_t, uint64_t> buckets_;
  size_t count_ = 0;  // values added after the switch to buckets
};

struct RunAcc {
  RunSummary s;
  Samples step_ms, tflops, tokens;
  uint64_t checkpoint_starts = 0, checkpoint_ends = 0;
  bool skipped_is_total = false;
  uint64_t skipped_last = 0;
};

}  // namespace

struct TrainingSummaryBuilder::State {
  size_t max_runs;
  uint64_t dropped = 0;
  std::deque<RunAcc> runs;  // ordered by run number

  // The accumulator of `run`, or nullptr for a run already dropped. Runs
  // arrive in order, so this is almost always the last one.
  RunAcc* Run(int32_t run) {
    if (runs.empty() || runs.back().s.run < run) {
      runs.emplace_back().s.run = run;
      if (runs.size() > max_runs) {
        runs.pop_front();
        ++dropped;
      }
      return &runs.back();
    }
    if (runs.back().s.run == run) return &runs.back();
    auto by_run = [](const RunAcc& a, int32_t r) { return a.s.run < r; };
    auto at = std::lower_bound(runs.begin(), runs.end(), run, by_run);
    if (at != runs.end() && at->s.run == run) return &*at;
    // An older run than the kept ones: it would be the next to drop.
    if (at == runs.begin() && (dropped > 0 || runs.size() >= max_runs))
      return nullptr;
    runs.emplace(at)->s.run = run;
    if (runs.size() > max_runs) {
      runs.pop_front();
      ++dropped;
    }
    return &*std::lower_bound(runs.begin(), runs.end(), run, by_run);
  }
};

TrainingSummaryBuilder::TrainingSummaryBuilder(size_t max_runs)
    : state_(std::make_unique<State>()) {
  state_->max_runs = std::max<size_t>(max_runs, 1);
}
TrainingSummaryBuilder::~TrainingSummaryBuilder() = default;
TrainingSummaryBuilder::TrainingSummaryBuilder(
    TrainingSummaryBuilder&&) noexcept = default;
TrainingSummaryBuilder& TrainingSummaryBuilder::operator=(
    TrainingSummaryBuilder&&) noexcept = default;

uint64_t TrainingSummaryBuilder::dropped_runs() const {
  return state_->dropped;
}

void TrainingSummaryBuilder::Add(const IterationRecord& r) {
  RunAcc* acc = state_->Run(r.run);
  if (acc == nullptr) return;
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
    acc->step_ms.Add(*v);
  if (auto v = r.Get(IterationField::kTflopsPerGpu); finite(v))
    acc->tflops.Add(*v);
  if (auto v = r.Get(IterationField::kTokensPerSPerGpu); finite(v))
    acc->tokens.Add(*v);
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
  RunAcc* acc = state_->Run(e.run);
  if (acc == nullptr) return;
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

void TrainingSummaryBuilder::Add(const ValidationRecord& v) {
  if (v.split != EvaluationSplit::kValidation) return;
  RunAcc* acc = state_->Run(v.run);
  if (acc == nullptr) return;
  ++acc->s.validations;
  acc->s.last_validation_iteration = v.iteration;
  if (v.loss) acc->s.last_validation_loss = v.loss;
}

std::vector<RunSummary> TrainingSummaryBuilder::Build() const {
  std::vector<RunSummary> out;
  out.reserve(state_->runs.size());
  for (const RunAcc& acc : state_->runs) {
    RunSummary s = acc.s;
    s.step_ms_p10 = acc.step_ms.Percentile(0.10);
    s.step_ms_p50 = acc.step_ms.Percentile(0.50);
    s.step_ms_p90 = acc.step_ms.Percentile(0.90);
    s.tflops_per_gpu_p50 = acc.tflops.Percentile(0.50);
    s.tokens_per_s_per_gpu_p50 = acc.tokens.Percentile(0.50);
    s.checkpoints =
        acc.checkpoint_ends > 0 ? acc.checkpoint_ends : acc.checkpoint_starts;
    if (acc.skipped_is_total) s.skipped_iterations += acc.skipped_last;
    out.push_back(s);
  }
  return out;
}

std::vector<RunSummary> SummarizeTrainingLog(const TrainingLog& log) {
  TrainingSummaryBuilder b;
  for (const auto& r : log.records) b.Add(r);
  for (const auto& e : log.events) b.Add(e);
  for (const auto& v : log.validations) b.Add(v);
  return b.Build();
}

}  // namespace lens
