// Training-log parsing: turns the logs of training jobs into typed
// per-iteration records and events (training start, checkpoint saves, training
// end), grouped into runs.
//
// Input is what reaches a cluster's log pipeline: raw lines, lines with ANSI
// colour codes (also codes whose ESC byte was lost, "[32m"), CRI log lines
// ("<rfc3339> stdout F <line>", partial "P" records joined) and fluent-bit JSON
// records (the "log" or "message" field).
//
// Formats are recognised per line and parsed by field name, never by position:
// Megatron-LM / Megatron-DeepSpeed ("iteration N/ M | key: value | ..." and
// "key=value"), Primus (Megatron with "[date][rank-i/n][LEVEL] [file:line] :"
// prefixes, "X/Y" value pairs and GPU memory fields), TorchTitan ("step: N
// loss: ..."), NeMo 2 ("Training epoch E, iteration i/n | ... | global_step:
// ..."), Hugging Face Trainer ("{'loss': ...}" dicts) and DeepSpeed
// ("step=N, skipped=K, lr=[...]" and its timer lines).
// docs/training-log-schema.md lists every field, its unit and where it comes
// from.
//
// Runs: a run starts at each training-start event and whenever the iteration
// counter goes backwards. Runs are numbered from
// TrainingParserOptions::first_run. The iteration line of the framework
// (Megatron, Primus, NeMo, TorchTitan, HF Trainer) defines an iteration;
// DeepSpeed's engine lines ("step=N", its timer line) only add fields to it
// once a log has printed such a line, and never start a record or a run then.
// A repeated iteration within a run (every rank printing the same line) is
// dropped, or merged when it adds fields.
#ifndef LENS_TRAINING_H_
#define LENS_TRAINING_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lens/export.h"
#include "lens/status.h"

namespace lens {

// The log format family a record or event was recognised in.
enum class TrainingFormat : uint8_t {
  kUnknown = 0,
  kMegatron,  // Megatron-LM, Megatron-DeepSpeed ("iteration N/ M | ...")
  kPrimus,    // Megatron lines with the Primus "[date][rank-i/n][LEVEL]" prefix
  kTorchTitan,  // "step: N  loss: ..."
  kNeMo,        // "Training epoch E, iteration i/n | ... global_step ..."
  kHfTrainer,   // Hugging Face Trainer "{'loss': ...}" dicts
  kDeepSpeed,   // "step=N, skipped=K, lr=[...]" and timer.py lines
};

// "megatron", "primus", "torchtitan", "nemo", "hf_trainer", "deepspeed" or
// "unknown".
LENS_EXPORT std::string_view TrainingFormatName(TrainingFormat format);

// The typed fields of an iteration record. Every field is optional: a field the
// line does not print is absent, never zero. Units are in the names; ratios are
// 0..1.
enum class IterationField : uint8_t {
  kTargetIteration,  // total iterations of the run ("N/ M": M)
  kEpoch,            // epoch (NeMo, HF Trainer: fractional)
  kConsumedSamples,  // samples consumed so far
  kConsumedTokens,   // tokens consumed so far
  kElapsedMs,        // wall time of this iteration (ms; converted from s where
                     // printed in s)
  kElapsedMsAvg,     // Primus "X/Y": the second number (running average), ms
  kLearningRate,     //
  kGlobalBatchSize,  //
  kLoss,  // the language-model training loss (lm loss, reduced_train_loss, ...)
  kLossScale,            // mixed-precision loss scale
  kGradNorm,             //
  kParamsNorm,           //
  kNumZeros,             // number of zero gradients
  kSkippedIterations,    // skipped iterations (Megatron: in this logging
                         // interval; DS: total)
  kNanIterations,        // NaN iterations in this logging interval
  kTflopsPerGpu,         // model TFLOP/s per GPU
  kTflopsPerGpuAvg,      // Primus "X/Y": the second number
  kTokensPerSPerGpu,     // tokens per second per GPU
  kTokensPerSPerGpuAvg,  // Primus "X/Y": the second number
  kSamplesPerS,          // samples per second (whole job)
  kMfu,                  // model FLOPs utilisation, 0..1
  kActualSeqlen,         // actual sequence length
  kMemUsedGb,            // device memory in use, GB as the framework prints it
                         // (GiB-based)
  kMemFreeGb,            //
  kMemTotalGb,           //
  kMemUsageRatio,        // used / total, 0..1
  kMemMaxAllocatedGb,    // peak allocated (DeepSpeed MaxMemAllocated)
  kMaxMemRank,           // Primus "rank-N max mem usage/usage_ratio": N, the
                         // rank using the most device memory
  kMaxMemUsedGb,         // that rank's memory in use, GB as printed
  kMaxMemUsageRatio,     // that rank's used / total, 0..1
  kCount,
};

// Static description of one field (for tables, JSON keys, Python attributes,
// CSV headers).
struct IterationFieldInfo {
  IterationField field;
  std::string_view
      name;  // snake_case key used in JSON, CSV and Python, e.g. "elapsed_ms"
  bool integer;           // printed without a fraction
  std::string_view help;  // one line: meaning and unit
};

// All fields in declaration order. The span refers to static storage.
LENS_EXPORT std::span<const IterationFieldInfo> IterationFields();

// One parsed iteration line (or two merged lines of one step).
class LENS_EXPORT IterationRecord {
 public:
  int32_t run = 1;        // run number, see the file comment
  int64_t iteration = 0;  // the step/iteration number the framework printed
  uint64_t line = 0;      // 1-based line number in the parser's input
  TrainingFormat format = TrainingFormat::kUnknown;
  std::optional<double>
      timestamp_s;  // Unix seconds from the line's CRI/log prefix, if any
  std::optional<int32_t> rank;  // from a "[rank-i/n]" or "i: " prefix, if any
  std::optional<int32_t> world_size;  // from "[rank-i/n]"

  // Numeric fields the parser does not know by name, in line order: (normalised
  // key, value). The key is lower case with words separated by single spaces
  // ("lm tflops").
  std::vector<std::pair<std::string, double>> extra;

  bool Has(IterationField f) const {
    return (present_ >> static_cast<int>(f)) & 1u;
  }
  // The value, or nullopt when the line did not print the field.
  std::optional<double> Get(IterationField f) const {
    if (!Has(f)) return std::nullopt;
    return values_[static_cast<int>(f)];
  }
  void Set(IterationField f, double v) {
    values_[static_cast<int>(f)] = v;
    present_ |= uint64_t{1} << static_cast<int>(f);
  }
  void Clear(IterationField f) {
    present_ &= ~(uint64_t{1} << static_cast<int>(f));
  }
  // Number of typed fields present.
  int FieldCount() const { return __builtin_popcountll(present_); }

 private:
  double values_[static_cast<int>(IterationField::kCount)] = {};
  uint64_t present_ = 0;
};

enum class TrainingEventType : uint8_t {
  kTrainingStart,
  kCheckpointSaveStart,
  kCheckpointSaveEnd,
  kTrainingEnd,
};

// "training_start", "checkpoint_save_start", "checkpoint_save_end",
// "training_end".
LENS_EXPORT std::string_view TrainingEventTypeName(TrainingEventType type);

struct LENS_EXPORT TrainingEvent {
  TrainingEventType type = TrainingEventType::kTrainingStart;
  int32_t run = 1;
  uint64_t line = 0;  // 1-based line number in the parser's input
  TrainingFormat format = TrainingFormat::kUnknown;
  std::optional<int64_t> iteration;  // checkpoint iteration/step, when printed
  std::optional<double>
      timestamp_s;  // Unix seconds from the line's prefix, if any
  std::optional<double>
      duration_s;    // checkpoint save duration: printed, or end - start time
  std::string path;  // checkpoint path, when printed (at most 4 KiB)
};

// Which data an evaluation ran on.
enum class EvaluationSplit : uint8_t { kValidation, kTest };

// "validation" or "test".
LENS_EXPORT std::string_view EvaluationSplitName(EvaluationSplit split);

// A validation (or test) evaluation the log printed: Megatron's "validation
// loss at iteration N | lm loss value: .. | lm loss PPL: .. |", HF Trainer's
// {'eval_loss': ..} dict, TorchTitan's "validate step: N  loss: ..", and
// Lightning's "'val_loss' reached X" checkpoint line.
struct LENS_EXPORT ValidationRecord {
  int32_t run = 1;
  int64_t iteration = 0;  // the training iteration evaluated (as printed, else
                          // the run's latest iteration)
  uint64_t line = 0;      // 1-based line number in the parser's input
  TrainingFormat format = TrainingFormat::kUnknown;
  std::optional<double> timestamp_s;  // Unix seconds from the line's prefix
  EvaluationSplit split = EvaluationSplit::kValidation;
  // The evaluation after training ended (Megatron "... on validation set",
  // "... on test set", "at the end of training"), not a periodic one.
  bool end_of_training = false;
  std::optional<double> loss;        // the language-model loss
  std::optional<double> perplexity;  // as printed (Megatron "lm loss PPL")
  // Other printed values, normalised names ("reg loss", "reg loss ppl",
  // "eval runtime"), at most 32.
  std::vector<std::pair<std::string, double>> extra;
};

// Megatron's per-rank device memory report: "[Rank N] (after N iterations)
// memory (MB) | allocated: .. | max allocated: .. | reserved: .. | max
// reserved: ..", printed by one rank of each model-parallel group.
struct LENS_EXPORT MemoryReport {
  int32_t run = 1;
  std::optional<int64_t> iteration;  // "(after N iterations)", "(before
                                     // save_checkpoint for iteration N)"
  uint64_t line = 0;                 // 1-based line number
  TrainingFormat format = TrainingFormat::kUnknown;
  std::optional<double> timestamp_s;
  int32_t rank = 0;
  // What the report follows, as printed in parentheses: "after 10
  // iterations", "before save_checkpoint for iteration 200" (<= 128 bytes).
  std::string context;
  std::optional<double> allocated_mb, max_allocated_mb, reserved_mb,
      max_reserved_mb;  // MiB, as printed ("MB")
};

struct TrainingParserOptions {
  int32_t first_run =
      1;  // number of the first run (continue numbering across restarts)
  // Lines longer than this are skipped, so memory stays bounded by this limit
  // whatever the input. stats().oversized_lines counts those that had to be
  // held or parsed: a long line without a trigger word inside one Feed() chunk
  // is skipped without being looked at. Minimum 4096.
  size_t max_line_bytes = 1 << 20;
};

// Counters of what the parser saw. "Candidate" lines look like metric lines (an
// iteration or step keyword and several key/number pairs) but matched no
// format: a non-zero count means the log format drifted; unparsed_example holds
// the first such line (at most 512 bytes).
struct TrainingParserStats {
  uint64_t bytes = 0;
  uint64_t lines = 0;
  uint64_t records = 0;               // iteration records emitted (after dedup)
  uint64_t events = 0;                // events emitted
  uint64_t validations = 0;           // validation records emitted
  uint64_t memory_reports = 0;        // memory reports emitted
  uint64_t duplicate_iterations = 0;  // repeated iterations dropped (or merged)
  uint64_t unparsed_candidates = 0;
  uint64_t oversized_lines = 0;
  std::string unparsed_example;
};

// Streaming parser. Feed() accepts chunks split anywhere (also inside a line or
// a UTF-8 sequence); Finish() ends the input and flushes a last unterminated
// line. Records and events accumulate until taken.
//
// Emission: a record is emitted once, when its iteration is complete: at the
// next iteration line, a new run, Flush() or Finish() (a later line of the
// same step may still add fields until then). Events after a record's line are
// held with it, so records and events leave in input order (merge the two
// vectors by `line`). Only after Flush() can a record be emitted again: a later
// line of the flushed iteration re-emits it merged, with the same run and
// iteration (treat records as upserts keyed by run and iteration).
//
// Memory is bounded whatever the input: lines over max_line_bytes are skipped
// and the run state is a fixed set of small items. Not thread-safe: one parser
// per stream; distinct parsers are independent.
class LENS_EXPORT TrainingLogParser {
 public:
  explicit TrainingLogParser(TrainingParserOptions options = {});
  ~TrainingLogParser();
  TrainingLogParser(TrainingLogParser&&) noexcept;
  TrainingLogParser& operator=(TrainingLogParser&&) noexcept;

  void Feed(std::string_view chunk);
  void Finish();
  // Completes the open record now, for a live stream that went quiet (see
  // "Emission" above). Finish() implies it.
  void Flush();

  // Moves out what was completed since the last call, in input order.
  std::vector<IterationRecord> TakeRecords();
  std::vector<TrainingEvent> TakeEvents();
  std::vector<ValidationRecord> TakeValidations();
  std::vector<MemoryReport> TakeMemoryReports();
  // The same into *out (cleared first; its storage is reused by the parser),
  // so a caller alternating one vector does not reallocate per batch.
  void TakeRecords(std::vector<IterationRecord>* out);

  const TrainingParserStats& stats() const;
  // The run the next record belongs to.
  int32_t current_run() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// A whole parsed log.
struct TrainingLog {
  std::vector<IterationRecord> records;
  std::vector<TrainingEvent> events;
  std::vector<ValidationRecord> validations;
  std::vector<MemoryReport> memory_reports;
  TrainingParserStats stats;
};

// Parses text held in memory.
LENS_EXPORT TrainingLog ParseTrainingLog(std::string_view text,
                                         TrainingParserOptions options = {});

// Reads and parses a file. Errors: NotFound / PermissionDenied /
// InvalidArgument (a directory) naming the path.
LENS_EXPORT StatusOr<TrainingLog> ParseTrainingLogFile(
    const std::string& path, TrainingParserOptions options = {});

// Per-run summary of a log.
struct RunSummary {
  int32_t run = 1;
  TrainingFormat format = TrainingFormat::kUnknown;
  uint64_t iterations = 0;  // records in the run
  std::optional<int64_t> first_iteration, last_iteration, target_iteration;
  std::optional<double> step_ms_p10, step_ms_p50, step_ms_p90;  // of elapsed_ms
  std::optional<double> tflops_per_gpu_p50, tokens_per_s_per_gpu_p50;
  std::optional<double> first_loss, last_loss;  // first/last finite loss
  uint64_t nan_loss_records = 0;  // records whose loss is NaN or infinite
  uint64_t nan_iterations = 0;    // sum of nan_iterations fields
  uint64_t skipped_iterations =
      0;  // sum (Megatron) or last value (DeepSpeed total counter)
  uint64_t checkpoints =
      0;  // checkpoint saves (end events, or starts if no end)
  uint64_t validations = 0;  // validation records (test split excluded)
  std::optional<int64_t> last_validation_iteration;
  std::optional<double> last_validation_loss;
  bool ended = false;  // a training-end event was seen
};

// Accumulates records and events (in any number of batches) into per-run
// summaries, without keeping the records. Each Add() costs O(log runs kept),
// whatever came before. Memory is bounded: the latest `max_runs` runs are kept
// (older ones are dropped and counted in dropped_runs()), and a run's
// percentiles are exact up to 256 values and within 0.5% beyond (a
// log-bucket histogram). Not thread-safe.
class LENS_EXPORT TrainingSummaryBuilder {
 public:
  static constexpr size_t kDefaultMaxRuns = 1000;
  explicit TrainingSummaryBuilder(size_t max_runs = kDefaultMaxRuns);
  ~TrainingSummaryBuilder();
  TrainingSummaryBuilder(TrainingSummaryBuilder&&) noexcept;
  TrainingSummaryBuilder& operator=(TrainingSummaryBuilder&&) noexcept;
  void Add(const IterationRecord& record);
  void Add(const TrainingEvent& event);
  void Add(const ValidationRecord& validation);
  // Summaries of the runs kept, ordered by run number.
  std::vector<RunSummary> Build() const;
  // Runs dropped to stay within max_runs (the oldest first).
  uint64_t dropped_runs() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Convenience: summaries of a parsed log.
LENS_EXPORT std::vector<RunSummary> SummarizeTrainingLog(
    const TrainingLog& log);

// --- Output formats (the schema is documented in docs/training-log-schema.md)
// ---

// Appends one JSON object (no newline):
// {"type":"iteration","run":..,"iteration":..,...}. Non-finite numbers are
// written as the strings "nan", "inf", "-inf".
LENS_EXPORT void AppendJson(const IterationRecord& record, std::string* out);
// {"type":"training_start"|...,"run":..,"line":..,...}
LENS_EXPORT void AppendJson(const TrainingEvent& event, std::string* out);
LENS_EXPORT void AppendJson(const RunSummary& summary, std::string* out);
// {"type":"validation","run":..,"line":..,"format":..,"iteration":..,
// "split":"validation"|"test","loss":..,"perplexity":..,"extra":{..}}
LENS_EXPORT void AppendJson(const ValidationRecord& validation,
                            std::string* out);
// {"type":"memory_report","run":..,"line":..,"format":..,"iteration":..,
// "rank":..,"context":..,"allocated_mb":..,"max_allocated_mb":..,"reserved_mb":..,
// "max_reserved_mb":..}
LENS_EXPORT void AppendJson(const MemoryReport& report, std::string* out);

// CSV with a fixed header (CsvHeader()) and one row per record; absent fields
// are empty.
LENS_EXPORT std::string CsvHeader();
LENS_EXPORT void AppendCsvRow(const IterationRecord& record, std::string* out);

// One human-readable table row per record (fixed-width columns; TableHeader()
// first).
LENS_EXPORT std::string TableHeader();
LENS_EXPORT void AppendTableRow(const IterationRecord& record,
                                std::string* out);

// The human-readable summary that `lens parse-log` prints by default.
// `dropped_runs`: earlier runs left out (TrainingSummaryBuilder::dropped_runs).
LENS_EXPORT std::string FormatSummary(const std::vector<RunSummary>& runs,
                                      const TrainingParserStats& stats,
                                      uint64_t dropped_runs = 0);

}  // namespace lens

#endif  // LENS_TRAINING_H_
