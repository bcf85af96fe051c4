#include "training/runs.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace lens::training {
namespace {

using F = IterationField;

// Events wait behind the open record so that records and events leave in input
// order; past this many the record is completed early.
constexpr size_t kMaxHeldEvents = 64;
constexpr size_t kMaxExtra = 64;

// Equal as two printouts of one value: frameworks round differently (Megatron
// prints the learning rate with 4 significant digits, DeepSpeed with 16).
bool SameValue(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (a == b) return true;
  return std::fabs(a - b) <= 1e-3 * std::max(std::fabs(a), std::fabs(b));
}

bool HasExtra(const IterationRecord& r, std::string_view key) {
  return std::any_of(r.extra.begin(), r.extra.end(),
                     [&](const auto& kv) { return kv.first == key; });
}

bool AddExtra(IterationRecord* r, std::string_view key, double value) {
  if (r->extra.size() >= kMaxExtra || HasExtra(*r, key)) return false;
  r->extra.emplace_back(std::string(key), value);
  return true;
}

}  // namespace

bool MergeMissingFields(const IterationRecord& from, IterationRecord* to) {
  bool added = false;
  for (int f = 0; f < static_cast<int>(F::kCount); ++f) {
    const auto field = static_cast<F>(f);
    if (from.Has(field) && !to->Has(field)) {
      to->Set(field, *from.Get(field));
      added = true;
    }
  }
  for (const auto& [key, value] : from.extra) added |= AddExtra(to, key, value);
  return added;
}

bool ApplyComplementary(const IterationRecord& from, IterationRecord* to) {
  bool added = false;
  std::string key(TrainingFormatName(from.format));
  key.push_back('_');
  const size_t prefix = key.size();
  const bool deepspeed = from.format == TrainingFormat::kDeepSpeed;
  for (const IterationFieldInfo& info : IterationFields()) {
    const std::optional<double> v = from.Get(info.field);
    if (!v) continue;
    key.resize(prefix);
    if (deepspeed && info.field == F::kSkippedIterations) {
      // A running total since the first step, not a count per interval.
      key.append("skipped_total");
      added |= AddExtra(to, key, *v);
      continue;
    }
    // The timer's epoch is its own counter, never advanced by Megatron.
    if (deepspeed && info.field == F::kEpoch) continue;
    if (!to->Has(info.field)) {
      to->Set(info.field, *v);
      added = true;
    } else if (!SameValue(*to->Get(info.field), *v)) {
      key.append(info.name);
      added |= AddExtra(to, key, *v);
    }
  }
  for (const auto& [name, value] : from.extra)
    added |= AddExtra(to, name, value);
  return added;
}

void RunAssembler::OnProgress(long long progress, long long total) {
  if (!total_steps_ || *total_steps_ == total) last_progress_ = progress;
}

void RunAssembler::OnRecord(LineResult& result, uint64_t line) {
  IterationRecord& r = result.record;
  r.line = line;
  if (result.progress >= 0) OnProgress(result.progress, result.progress_total);
  const RecordRole role = result.role;
  if (any_record_ && role < top_role_) {
    OnEngineLine(r, role);
    return;
  }
  if (!any_record_ || role > top_role_) {
    any_record_ = true;
    top_role_ = role;
    if (has_open_ && !open_emitted_ && open_role_ < role) {
      // The open record came from lines that complement this kind: it waits
      // for its iteration line like any later engine line.
      group_ = std::move(open_);
      has_group_ = true;
      group_has_step_ = open_role_ == RecordRole::kEngineStep;
      group_has_timer_ = open_has_timer_;
      has_open_ = false;
      run_has_records_ = prev_run_has_records_;
      last_iteration_ = prev_last_iteration_;
      ReleaseHeld();
    }
  }
  if (!result.iteration_known) {
    // HF Trainer dicts carry no step: take the progress bar's, else count on.
    const int64_t next = run_has_records_ ? last_iteration_ + 1 : 1;
    r.iteration = std::max<int64_t>(last_progress_, next);
    if (total_steps_)
      r.Set(F::kTargetIteration, static_cast<double>(*total_steps_));
  }
  if (run_has_records_) {
    if (r.iteration < last_iteration_) {
      NewRun();
    } else if (r.iteration == last_iteration_) {
      ++stats_->duplicate_iterations;
      if (!has_open_) return;
      if (open_role_ < role) {
        // Flushed before its iteration line came: the line defines it now.
        ApplyComplementary(open_, &r);
        r.run = open_.run;
        open_ = std::move(r);
        open_role_ = role;
        ReEmitIfDone(true);
      } else {
        // Another rank's copy, or a second line of the step.
        ReEmitIfDone(MergeMissingFields(r, &open_));
      }
      return;
    }
  }
  Open(std::move(r), role);
}

void RunAssembler::OnEngineLine(IterationRecord& r, RecordRole role) {
  if (role == RecordRole::kEngineTimer) {
    // DeepSpeed prints the timer line right after the engine's step line of
    // the same step; its own global_step restarts at 0 after a resume.
    if (top_role_ == RecordRole::kEngineStep) {
      if (has_open_ && open_role_ == RecordRole::kEngineStep &&
          !open_has_timer_) {
        open_has_timer_ = true;
        ReEmitIfDone(MergeMissingFields(r, &open_));
      }
      return;
    }
    if (has_group_ && group_has_step_ && !group_has_timer_) {
      MergeMissingFields(r, &group_);
      group_has_timer_ = true;
      return;
    }
    group_ = std::move(r);
    has_group_ = true;
    group_has_step_ = false;
    group_has_timer_ = true;
    return;
  }
  // An engine step line in a log with iteration lines.
  if (has_open_ && open_role_ == RecordRole::kPrimary &&
      open_.iteration == r.iteration) {
    // Printed after its iteration line.
    ReEmitIfDone(ApplyComplementary(r, &open_));
    return;
  }
  if (has_group_ && group_has_step_ && group_.iteration == r.iteration) {
    MergeMissingFields(r, &group_);
    return;
  }
  group_ = std::move(r);
  has_group_ = true;
  group_has_step_ = true;
  group_has_timer_ = false;
}

void RunAssembler::Open(IterationRecord&& r, RecordRole role) {
  CompleteOpen();
  AttachGroup(&r);
  prev_run_has_records_ = run_has_records_;
  prev_last_iteration_ = last_iteration_;
  r.run = run_;
  open_ = std::move(r);
  has_open_ = true;
  open_emitted_ = false;
  open_role_ = role;
  open_has_timer_ = role == RecordRole::kEngineTimer;
  run_has_records_ = true;
  last_iteration_ = open_.iteration;
  run_format_ = open_.format;
}

void RunAssembler::AttachGroup(IterationRecord* r) {
  if (!has_group_) return;
  has_group_ = false;
  // Engine lines of a step whose iteration line was not printed are dropped.
  if (group_.iteration == r->iteration) ApplyComplementary(group_, r);
}

void RunAssembler::ReEmitIfDone(bool changed) {
  if (changed && open_emitted_) records_.push_back(open_);
}

void RunAssembler::CompleteOpen(bool keep) {
  if (has_open_ && !open_emitted_) {
    if (keep) {
      records_.push_back(open_);
    } else {
      records_.push_back(std::move(open_));
      has_open_ = false;
    }
    open_emitted_ = true;
    ++stats_->records;
  }
  ReleaseHeld();
}

void RunAssembler::ReleaseHeld() {
  for (auto& e : held_.events) events_.push_back(std::move(e));
  for (auto& v : held_.validations) validations_.push_back(std::move(v));
  for (auto& m : held_.memory_reports) memory_reports_.push_back(std::move(m));
  held_.events.clear();
  held_.validations.clear();
  held_.memory_reports.clear();
}

template <typename T>
void RunAssembler::Emit(T&& item, std::vector<std::decay_t<T>>* out,
                        std::vector<std::decay_t<T>>* held) {
  if (has_open_ && !open_emitted_) {
    held->push_back(std::forward<T>(item));
    if (held_.size() >= kMaxHeldEvents) CompleteOpen(/*keep=*/true);
  } else {
    out->push_back(std::forward<T>(item));
  }
}

void RunAssembler::OnValidation(ValidationRecord& v, bool iteration_known,
                                uint64_t line) {
  v.line = line;
  v.run = run_;
  if (v.format == TrainingFormat::kUnknown) v.format = run_format_;
  if (!iteration_known) v.iteration = run_has_records_ ? last_iteration_ : 0;
  // Every rank printing the same result (TorchTitan) is one result.
  const auto key = std::make_tuple(v.iteration, v.split, v.end_of_training);
  if (last_validation_ == key) return;
  last_validation_ = key;
  ++stats_->validations;
  Emit(std::move(v), &validations_, &held_.validations);
}

void RunAssembler::OnMemoryReports(std::vector<MemoryReport>& reports,
                                   uint64_t line) {
  for (MemoryReport& m : reports) {
    m.line = line;
    m.run = run_;
    if (last_memory_ && last_memory_->first == m.rank &&
        last_memory_->second == m.context) {
      continue;
    }
    last_memory_.emplace(m.rank, m.context);
    ++stats_->memory_reports;
    Emit(std::move(m), &memory_reports_, &held_.memory_reports);
  }
}

void RunAssembler::Flush() { CompleteOpen(/*keep=*/true); }

void RunAssembler::NewRun() {
  CompleteOpen();
  ++run_;
  has_open_ = false;
  run_has_records_ = false;
  last_progress_ = -1;
  total_steps_.reset();
  for (auto& e : last_event_) e.reset();
  checkpoints_.clear();
  last_validation_.reset();
  last_memory_.reset();
}

void RunAssembler::OnEvent(TrainingEvent& e, uint64_t line) {
  e.line = line;
  if (e.format == TrainingFormat::kUnknown) e.format = run_format_;
  const size_t type = static_cast<size_t>(e.type);
  if (e.type == TrainingEventType::kTrainingStart) {
    if (run_has_records_) {
      NewRun();
    } else if (last_event_[type]) {
      return;  // every rank announcing the same start
    }
  }
  if (e.type == TrainingEventType::kCheckpointSaveEnd) {
    // The save that wrote this path, else the latest open one. Its iteration
    // wins: NeMo's "finalized" line counts the step after the one saved.
    auto start = std::find_if(
        checkpoints_.rbegin(), checkpoints_.rend(),
        [&](const Checkpoint& c) { return c.start.path == e.path; });
    if (start == checkpoints_.rend()) {
      start = std::find_if(checkpoints_.rbegin(), checkpoints_.rend(),
                           [](const Checkpoint& c) { return !c.ended; });
    }
    if (start != checkpoints_.rend()) {
      if (start->start.iteration) e.iteration = start->start.iteration;
      if (e.path.empty()) e.path = start->start.path;
      const auto& t0 = start->start.timestamp_s;
      if (!start->ended && !e.duration_s && e.timestamp_s && t0 &&
          *e.timestamp_s >= *t0) {
        e.duration_s = std::round((*e.timestamp_s - *t0) * 1e6) / 1e6;
      }
      start->ended = true;
    }
  }
  if (run_has_records_ && !e.iteration &&
      e.type != TrainingEventType::kTrainingStart) {
    e.iteration = last_iteration_;  // saved (or ended) after the last step
  }
  if (e.type == TrainingEventType::kCheckpointSaveStart) {
    if (checkpoints_.size() >= 8) checkpoints_.erase(checkpoints_.begin());
    checkpoints_.push_back({e, false});
  }
  // One event per save and step: other ranks, and frameworks that log a save in
  // several lines or files (NeMo writes "x.ckpt" and "x-last.ckpt"), repeat it.
  const auto& last = last_event_[type];
  if (last && last->iteration == e.iteration) return;
  e.run = run_;
  last_event_[type] = e;
  ++stats_->events;
  Emit(TrainingEvent(e), &events_, &held_.events);
}

}  // namespace lens::training
