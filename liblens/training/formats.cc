#include "training/formats.h"

#include "training/numbers.h"

namespace lens::training {

namespace {

// "iteration 5", "step: 5", "'loss': 2.5", "loss=nan": a metric keyword with a
// number.
bool HasKeywordNumber(std::string_view line) {
  for (std::string_view word : {"iteration", "step", "loss"}) {
    for (size_t at = line.find(word); at != std::string_view::npos;
         at = line.find(word, at + 1)) {
      size_t j = at + word.size();
      while (j < line.size() &&
             (IsBlank(line[j]) || line[j] == ':' || line[j] == '=' ||
              line[j] == '\'' || line[j] == '"')) {
        ++j;
      }
      double v = 0;
      if (j > at + word.size() && j < line.size() &&
          ParseNumber(line.substr(j), &v) > 0) {
        return true;
      }
    }
  }
  return false;
}

// Lines frameworks print next to iteration lines that are known not to be
// iterations.
constexpr std::string_view kKnownNoise[] = {
    "memory (MB)",  // Megatron per-rank memory report
    "time (ms)",    // DeepSpeed/Megatron timers
};

}  // namespace

bool LooksLikeMetrics(std::string_view line) {
  if (!HasKeywordNumber(line)) return false;
  for (std::string_view noise : kKnownNoise) {
    if (line.find(noise) != std::string_view::npos) return false;
  }
  // At least three "key: number" / "key=number" pairs whose key ends in a word
  // character (timestamps such as "10:48:53" do not count).
  int pairs = 0;
  for (size_t i = 1; i + 1 < line.size(); ++i) {
    if (line[i] != ':' && line[i] != '=') continue;
    const char k = line[i - 1];
    const bool key_end = (k >= 'a' && k <= 'z') || (k >= 'A' && k <= 'Z') ||
                         k == ')' || k == '\'' || k == '_';
    size_t j = i + 1;
    while (j < line.size() && IsBlank(line[j])) ++j;
    if (key_end && j < line.size() &&
        (IsDigit(line[j]) || line[j] == '-' || line[j] == '.')) {
      ++pairs;
    }
  }
  return pairs >= 3;
}

void ParseLine(std::string_view line, const LinePrefix& prefix, LineResult* out,
               Scratch* scratch) {
  out->kind = LineKind::kNothing;
  out->role = RecordRole::kPrimary;
  out->iteration_known = true;
  out->malformed = false;
  out->progress = -1;
  out->progress_total = 0;
  if (ParseMegatronLine(line, out, scratch)) {
    if (prefix.primus && out->record.format == TrainingFormat::kMegatron) {
      out->record.format = TrainingFormat::kPrimus;
    }
  } else if (!ParseValidationLine(line, out) &&
             !ParseMemoryReportLine(line, out) &&
             !ParseTorchTitanLine(line, out, scratch) &&
             !ParseDeepSpeedLine(line, out, scratch) &&
             !ParseDeepSpeedPipeLine(line, out, scratch) &&
             !ParseHfTrainerLine(line, out, scratch) &&
             !ParseProgressLine(line, out) && !ParseEventLine(line, out)) {
    out->kind =
        LooksLikeMetrics(line) ? LineKind::kCandidate : LineKind::kNothing;
    return;
  }
  if (out->kind == LineKind::kRecord) {
    out->record.timestamp_s = prefix.timestamp_s;
    out->record.rank = prefix.rank;
    out->record.world_size = prefix.world_size;
  } else if (out->kind == LineKind::kEvent) {
    out->event.timestamp_s = prefix.timestamp_s;
    if (prefix.primus && out->event.format == TrainingFormat::kMegatron) {
      out->event.format = TrainingFormat::kPrimus;
    }
  } else if (out->kind == LineKind::kValidation) {
    out->validation.timestamp_s = prefix.timestamp_s;
    if (prefix.primus && out->validation.format == TrainingFormat::kMegatron)
      out->validation.format = TrainingFormat::kPrimus;
  } else if (out->kind == LineKind::kMemoryReport) {
    for (MemoryReport& m : out->memory) {
      m.timestamp_s = prefix.timestamp_s;
      if (prefix.primus) m.format = TrainingFormat::kPrimus;
    }
  }
}

}  // namespace lens::training
