// The run rules of the training-log parser: which lines make an iteration
// record, which only add fields to one, when a record is complete, when a new
// run starts, and how events attach to runs. Fed with what the per-line
// parsers found (formats.h), in input order; the rules are documented in
// docs/training-log-schema.md ("Runs").
//
// Every per-record operation is O(1) in the number of records and runs seen:
// the state is the open record, the engine lines waiting for their iteration
// line, the events behind the open record (bounded) and the latest saves of
// the current run (bounded).
#ifndef LENS_TRAINING_RUNS_H_
#define LENS_TRAINING_RUNS_H_

#include <array>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "lens/training.h"
#include "training/formats.h"

namespace lens::training {

class RunAssembler {
 public:
  RunAssembler(int32_t first_run, TrainingParserStats* stats)
      : stats_(stats), run_(first_run) {}

  // A record line (result.kind == kRecord) at 1-based input line `line`.
  void OnRecord(LineResult& result, uint64_t line);
  // An event line.
  void OnEvent(TrainingEvent& event, uint64_t line);
  // A validation result; `iteration_known` false: the run's latest iteration.
  void OnValidation(ValidationRecord& v, bool iteration_known, uint64_t line);
  // Memory reports of one line.
  void OnMemoryReports(std::vector<MemoryReport>& reports, uint64_t line);
  // A progress bar "N/M" (HF Trainer's steps), and the announced total.
  void OnProgress(long long progress, long long total);
  void OnTotalSteps(long long total) { total_steps_ = total; }

  // Completes the open record now (and releases the events behind it). A later
  // line of the same iteration then re-emits it, merged.
  void Flush();

  std::vector<IterationRecord> TakeRecords() {
    return std::exchange(records_, {});
  }
  // Swaps the completed records into *out (cleared first), so two buffers
  // alternate without reallocating.
  void TakeRecords(std::vector<IterationRecord>* out) {
    out->clear();
    out->swap(records_);
  }
  std::vector<TrainingEvent> TakeEvents() { return std::exchange(events_, {}); }
  std::vector<ValidationRecord> TakeValidations() {
    return std::exchange(validations_, {});
  }
  std::vector<MemoryReport> TakeMemoryReports() {
    return std::exchange(memory_reports_, {});
  }
  int32_t run() const { return run_; }

 private:
  void OnEngineLine(IterationRecord& r, RecordRole role);
  void Open(IterationRecord&& r, RecordRole role);
  // Emits the open record; `keep`: a later line may still merge into it.
  void CompleteOpen(bool keep = false);
  void NewRun();
  void AttachGroup(IterationRecord* r);
  void ReEmitIfDone(bool changed);

  TrainingParserStats* stats_;
  int32_t run_;
  std::vector<IterationRecord> records_;
  std::vector<TrainingEvent> events_;
  std::vector<ValidationRecord> validations_;
  std::vector<MemoryReport> memory_reports_;

  // The highest record role this stream has printed: lines of lower roles are
  // complementary from then on.
  RecordRole top_role_ = RecordRole::kEngineTimer;
  bool any_record_ = false;

  // The open record: the latest iteration of the current run.
  bool has_open_ = false;
  bool open_emitted_ = false;  // already in records_ (completed or flushed)
  bool open_has_timer_ = false;
  RecordRole open_role_ = RecordRole::kPrimary;
  IterationRecord open_;
  TrainingFormat run_format_ = TrainingFormat::kUnknown;  // events' default
  // What followed the open record's line, released with it.
  struct Held {
    std::vector<TrainingEvent> events;
    std::vector<ValidationRecord> validations;
    std::vector<MemoryReport> memory_reports;
    size_t size() const {
      return events.size() + validations.size() + memory_reports.size();
    }
  } held_;
  // Appends `item` to `out`, or behind the open record while it is open.
  template <typename T>
  void Emit(T&& item, std::vector<std::decay_t<T>>* out,
            std::vector<std::decay_t<T>>* held);
  void ReleaseHeld();
  // The latest validation and memory report of this run, for deduplication.
  std::optional<std::tuple<int64_t, EvaluationSplit, bool>> last_validation_;
  std::optional<std::pair<int32_t, std::string>> last_memory_;  // rank, context

  // Run state before the open record was opened (restored when a record that
  // turns out complementary is taken back).
  bool run_has_records_ = false;
  int64_t last_iteration_ = 0;
  bool prev_run_has_records_ = false;
  int64_t prev_last_iteration_ = 0;

  // Engine lines waiting for the iteration line they belong to.
  bool has_group_ = false;
  bool group_has_step_ = false;  // a "step=N"/"steps: N" line is in the group
  bool group_has_timer_ = false;
  IterationRecord group_;

  // HF Trainer steps.
  long long last_progress_ = -1;
  std::optional<int64_t> total_steps_;

  // Events of the current run.
  std::array<std::optional<TrainingEvent>, 4> last_event_;  // per type
  struct Checkpoint {
    TrainingEvent start;
    bool ended;
  };
  std::vector<Checkpoint> checkpoints_;  // the latest saves started (<= 8)
};

// Adds the fields of `from` that `to` lacks. Returns whether anything was
// added.
bool MergeMissingFields(const IterationRecord& from, IterationRecord* to);

// Applies the fields of an engine line (DeepSpeed) to the iteration record
// it complements: fields the record lacks are filled; values that differ from
// the record's stay under "<format>_<field>" in extra; DeepSpeed's running
// total of skipped steps is always "deepspeed_skipped_total". Returns whether
// anything was added.
bool ApplyComplementary(const IterationRecord& from, IterationRecord* to);

}  // namespace lens::training

#endif  // LENS_TRAINING_RUNS_H_
