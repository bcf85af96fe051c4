// Per-line parsers of the training-log formats. Each takes one cleaned line (no
// CRI/JSON wrapper, no ANSI codes) and says what the line is. Stateless; the
// run logic lives in parser.cc.
#ifndef LENS_TRAINING_FORMATS_H_
#define LENS_TRAINING_FORMATS_H_

#include <string>
#include <string_view>
#include <vector>

#include "lens/training.h"
#include "training/fields.h"
#include "training/line.h"

namespace lens::training {

enum class LineKind : uint8_t {
  kNothing,       // noise
  kRecord,        // an iteration record (`record`)
  kEvent,         // an event (`event`)
  kProgress,      // a progress bar "N/M" (`progress`, `progress_total`)
  kTotalSteps,    // the run's total step count was announced (`progress_total`)
  kCandidate,     // looks like a metric line but matched no format
  kValidation,    // a validation/test evaluation (`validation`)
  kMemoryReport,  // per-rank memory reports (`memory`; glued lines give more)
};

// How a record line relates to the step it reports. A log's records come from
// the highest role it has printed so far; lower roles only add fields to them
// (docs/training-log-schema.md, "Runs").
enum class RecordRole : uint8_t {
  kEngineTimer = 0,  // DeepSpeed's timer line: its global_step is the timer's
                     // own count, restarted from 0 by a resume
  kEngineStep = 1,   // DeepSpeed's engine "step=N" and pipeline "steps: N"
  kPrimary = 2,      // a framework's iteration line (Megatron, Primus, NeMo,
                     // TorchTitan, HF Trainer)
};

struct LineResult {
  LineKind kind = LineKind::kNothing;
  RecordRole role = RecordRole::kPrimary;
  IterationRecord record;
  bool iteration_known =
      true;  // false: the format prints no step number (HF Trainer dicts)
  bool malformed =
      false;  // a record with fields that did not parse (truncated, garbled)
  TrainingEvent event;
  ValidationRecord validation;
  bool validation_iteration_known = true;  // false: the run's latest applies
  std::vector<MemoryReport> memory;
  long long progress = 0;
  long long progress_total = 0;
};

// Reusable buffers, so parsing allocates nothing per line in the steady state.
struct Scratch {
  KeyCache keys;
};

// Classifies one cleaned line. `prefix` holds what ParsePrefix found on it.
void ParseLine(std::string_view line, const LinePrefix& prefix, LineResult* out,
               Scratch* scratch);

// Individual formats; each returns true when it recognised the line (out
// filled).
bool ParseMegatronLine(std::string_view line, LineResult* out,
                       Scratch* scratch);
bool ParseTorchTitanLine(std::string_view line, LineResult* out,
                         Scratch* scratch);
bool ParseDeepSpeedPipeLine(std::string_view line, LineResult* out,
                            Scratch* scratch);
bool ParseDeepSpeedLine(std::string_view line, LineResult* out,
                        Scratch* scratch);
bool ParseHfTrainerLine(std::string_view line, LineResult* out,
                        Scratch* scratch);
bool ParseProgressLine(std::string_view line, LineResult* out);
// evaluation.cc: validation results and Megatron's memory reports.
bool ParseValidationLine(std::string_view line, LineResult* out);
bool ParseMemoryReportLine(std::string_view line, LineResult* out);
bool ParseEventLine(std::string_view line, LineResult* out);

// True when a line that no format accepted still looks like metrics (format
// drift).
bool LooksLikeMetrics(std::string_view line);

}  // namespace lens::training

#endif  // LENS_TRAINING_FORMATS_H_
