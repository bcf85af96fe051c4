// Evaluation results and memory reports:
//   Megatron     " validation loss at iteration 100 | lm loss value: 8.09E+00 |
//                lm loss PPL: 3.28E+03 | " (also "... on validation set",
//                "... on test set", "... the end of training for val data")
//   ALCF fork    " validation loss at iteration 137650 on 122880-sample draw
//                from validation set | lm loss value=2.697780lm loss
//                PPL=14.846734" (no separators between the values)
//   TorchTitan   "validate step: 100  loss:  5.1234  memory: ..."
//   Lightning    "Epoch 0, global step 9: 'val_loss' reached 1.26396 (best
//                1.26396), saving model to ..."
//   Megatron     "[Rank 0] (after 10 iterations) memory (MB) | allocated: X |
//                max allocated: Y | reserved: Z | max reserved: W", several
//                reports glued on one line when ranks print at once
// HF Trainer's {'eval_loss': ...} dicts are parsed in kv_formats.cc.
#include <string.h>

#include "training/fields.h"
#include "training/formats.h"
#include "training/numbers.h"

namespace lens::training {
namespace {

constexpr size_t kMaxExtra = 32;

size_t Find(std::string_view s, std::string_view word, size_t from = 0) {
  if (from >= s.size()) return std::string_view::npos;
  const void* hit =
      memmem(s.data() + from, s.size() - from, word.data(), word.size());
  return hit == nullptr
             ? std::string_view::npos
             : static_cast<size_t>(static_cast<const char*>(hit) - s.data());
}

void StartValidation(LineResult* out, TrainingFormat format) {
  out->kind = LineKind::kValidation;
  out->validation = ValidationRecord();
  out->validation.format = format;
  out->validation_iteration_known = true;
}

void AddExtra(ValidationRecord* v, std::string_view key, double value) {
  if (v->extra.size() < kMaxExtra) v->extra.emplace_back(key, value);
}

// "lm loss value: X | lm loss PPL: Y |" or, glued, "lm loss value=Xlm loss
// PPL=Y": each value follows "<key> value" or "<key> PPL" and ':' or '='.
void ParseMegatronValues(std::string_view rest, ValidationRecord* v) {
  std::string norm;
  while (true) {
    const size_t value_at = Find(rest, "value");
    const size_t ppl_at = Find(rest, "PPL");
    const size_t at = std::min(value_at, ppl_at);
    if (at == std::string_view::npos) return;
    const bool ppl = at == ppl_at;
    std::string_view key = rest.substr(0, at);
    while (!key.empty() && (IsBlank(key.front()) || key.front() == '|'))
      key.remove_prefix(1);
    key = TrimBlanks(key);
    std::string_view after = SkipBlanks(rest.substr(at + (ppl ? 3 : 5)));
    if (after.empty() || (after.front() != ':' && after.front() != '=')) {
      rest.remove_prefix(at + 1);
      continue;
    }
    after = SkipBlanks(after.substr(1));
    double number = 0;
    const size_t n = ParseNumber(after, &number, false);
    if (n == 0) return;
    NormalizeKey(key, &norm);
    if (norm == "lm loss") {
      (ppl ? v->perplexity : v->loss) = number;
    } else if (!norm.empty()) {
      if (ppl) norm += " ppl";
      AddExtra(v, norm, number);
    }
    rest = after.substr(n);
  }
}

bool ParseMegatronValidation(std::string_view line, LineResult* out) {
  const size_t loss_at = Find(line, " loss at ");
  if (loss_at == std::string_view::npos) return false;
  // "validation loss at", "validation-name loss at" (several validation sets).
  const size_t word = line.rfind("validation", loss_at);
  if (word == std::string_view::npos ||
      line.substr(word, loss_at - word).find(' ') != std::string_view::npos) {
    return false;
  }
  const size_t bar = line.find('|', loss_at);
  if (bar == std::string_view::npos) return false;
  StartValidation(out, TrainingFormat::kMegatron);
  ValidationRecord& v = out->validation;
  std::string_view where = line.substr(loss_at + 9, bar - loss_at - 9);
  if (where.find("test set") != std::string_view::npos ||
      where.find("test data") != std::string_view::npos) {
    v.split = EvaluationSplit::kTest;
  }
  v.end_of_training = where.find(" on ") != std::string_view::npos ||
                      where.find("end of training") != std::string_view::npos;
  long long iteration = 0;
  if (where.substr(0, 10) == "iteration " &&
      ParseInt(SkipBlanks(where.substr(10)), &iteration) > 0) {
    v.iteration = iteration;
  } else {
    out->validation_iteration_known = false;  // "the end of training"
  }
  ParseMegatronValues(line.substr(bar + 1), &v);
  return true;
}

bool ParseTorchTitanValidation(std::string_view line, LineResult* out) {
  const size_t at = Find(line, "validate step:");
  if (at == std::string_view::npos) return false;
  long long step = 0;
  std::string_view rest = SkipBlanks(line.substr(at + 14));
  const size_t n = ParseInt(rest, &step);
  if (n == 0) return false;
  const size_t loss_at = Find(rest, "loss:");
  double loss = 0;
  if (loss_at == std::string_view::npos ||
      ParseNumber(SkipBlanks(rest.substr(loss_at + 5)), &loss, false) == 0) {
    return false;
  }
  StartValidation(out, TrainingFormat::kTorchTitan);
  out->validation.iteration = step;
  out->validation.loss = loss;
  return true;
}

bool ParseLightningValidation(std::string_view line, LineResult* out) {
  const size_t at = Find(line, "'val_loss' reached ");
  if (at == std::string_view::npos) return false;
  double loss = 0;
  if (ParseNumber(line.substr(at + 19), &loss, false) == 0) return false;
  StartValidation(out, TrainingFormat::kNeMo);
  out->validation.loss = loss;
  const size_t step_at = line.rfind("global step ", at);
  long long step = 0;
  if (step_at != std::string_view::npos &&
      ParseInt(line.substr(step_at + 12), &step) > 0) {
    out->validation.iteration = step;
  } else {
    out->validation_iteration_known = false;
  }
  return true;
}

// "(after 10 iterations)", "(before save_checkpoint for iteration 200)".
std::optional<int64_t> ReportIteration(std::string_view context) {
  size_t at = context.find("iteration");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view before = TrimBlanks(context.substr(0, at));
  long long n = 0;
  if (context.substr(0, 6) == "after " && !before.empty() &&
      IsDigit(before.back())) {
    size_t start = before.size();
    while (start > 0 && IsDigit(before[start - 1])) --start;
    if (ParseInt(before.substr(start), &n) > 0) return n;
  }
  if (ParseInt(SkipBlanks(context.substr(at + 9)), &n) > 0) return n;
  return std::nullopt;
}

// Every validation line says so: "validation"/"validate" or "val_loss". One
// scan rules out the other lines (most of a log) before the parsers look.
bool MentionsValidation(std::string_view line) {
  // string_view::find looks for 'v' with memchr: fast on a rare letter,
  // where memmem's set-up costs more than the search on a short line.
  for (size_t at = line.find("val"); at != std::string_view::npos;
       at = line.find("val", at + 3)) {
    const std::string_view rest = line.substr(at + 3);
    if (rest.starts_with("id") || rest.starts_with("_loss")) return true;
  }
  return false;
}

}  // namespace

bool ParseValidationLine(std::string_view line, LineResult* out) {
  if (!MentionsValidation(line)) return false;
  return ParseMegatronValidation(line, out) ||
         ParseTorchTitanValidation(line, out) ||
         ParseLightningValidation(line, out);
}

bool ParseMemoryReportLine(std::string_view line, LineResult* out) {
  // "memory (MB)" first ('(' is rare; "[Rank " starts many DeepSpeed lines).
  const size_t mb_at = line.find("(MB)");
  if (mb_at == std::string_view::npos || mb_at < 7 ||
      line.substr(mb_at - 7, 7) != "memory ") {
    return false;
  }
  const size_t mem_at = mb_at - 7;
  size_t at = Find(line, "[Rank ");
  if (at == std::string_view::npos || at > mem_at) return false;
  out->memory.clear();
  while (at != std::string_view::npos) {
    const size_t next = Find(line, "[Rank ", at + 6);
    std::string_view report = line.substr(at + 6, next - at - 6);
    at = next;
    long long rank = 0;
    size_t n = ParseInt(report, &rank);
    if (n == 0 || n >= report.size() || report[n] != ']') continue;
    std::string_view rest = SkipBlanks(report.substr(n + 1));
    const size_t mem = rest.find("memory (MB)");
    if (rest.empty() || rest.front() != '(' || mem == std::string_view::npos)
      continue;
    MemoryReport m;
    m.format = TrainingFormat::kMegatron;
    m.rank = static_cast<int32_t>(rank);
    const size_t close = rest.rfind(')', mem);
    const std::string_view context = rest.substr(1, close - 1);
    m.context.assign(context.substr(0, 128));
    m.iteration = ReportIteration(context);
    for (std::string_view fields = rest.substr(mem + 11); !fields.empty();) {
      const size_t bar = fields.find('|', 1);
      std::string_view seg = fields.substr(0, bar);
      fields = bar == std::string_view::npos ? std::string_view()
                                             : fields.substr(bar);
      if (!seg.empty() && seg.front() == '|') seg.remove_prefix(1);
      const size_t colon = seg.find(':');
      if (colon == std::string_view::npos) continue;
      double v = 0;
      if (ParseNumber(SkipBlanks(seg.substr(colon + 1)), &v, false) == 0)
        continue;
      const std::string_view key = TrimBlanks(seg.substr(0, colon));
      if (key == "allocated") m.allocated_mb = v;
      if (key == "max allocated") m.max_allocated_mb = v;
      if (key == "reserved") m.reserved_mb = v;
      if (key == "max reserved") m.max_reserved_mb = v;
    }
    out->memory.push_back(m);
  }
  if (out->memory.empty()) return false;
  out->kind = LineKind::kMemoryReport;
  return true;
}

}  // namespace lens::training
