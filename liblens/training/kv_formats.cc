// Formats printed as "key: value" / "key=value" runs without '|' separators:
//   TorchTitan  "step: 1990  loss:  3.4370  memory: 68.57GiB(86.69%)  tps:
//   6,785  mfu: 39.73%" DeepSpeed   "[Rank 0] step=10, skipped=6,
//   lr=[9.6e-06, 9.6e-06], mom=[(0.9, 0.95)]"
//               "epoch=0/micro_step=10/global_step=10,
//               RunningAvgSamplesPerSec=173.4, ..."
//   HF Trainer  "{'loss': 2.5586, 'grad_norm': 6.84, 'learning_rate': 5e-05,
//   'epoch': 0.01}" tqdm        "  1%|1         | 1/100
//   [00:27<44:53, 27.20s/it]"
#include "training/fields.h"
#include "training/formats.h"
#include "training/numbers.h"

namespace lens::training {
namespace {

// Finds `word` at a word start (not preceded by a letter, digit or '_').
size_t FindWord(std::string_view s, std::string_view word, size_t from = 0) {
  while (true) {
    size_t at = s.find(word, from);
    if (at == std::string_view::npos) return at;
    char before = at == 0 ? ' ' : s[at - 1];
    bool word_char = (before >= 'a' && before <= 'z') ||
                     (before >= 'A' && before <= 'Z') || IsDigit(before) ||
                     before == '_';
    if (!word_char) return at;
    from = at + 1;
  }
}

// Splits s at top-level ", " (outside [] () and quotes) and calls fn(segment).
template <typename Fn>
void SplitTopLevel(std::string_view s, Fn fn) {
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '[' || c == '(' || c == '{') {
      ++depth;
    } else if (c == ']' || c == ')' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0 && i + 1 < s.size() && s[i + 1] == ' ') {
      fn(s.substr(start, i - start));
      start = i + 2;
    }
  }
  fn(s.substr(start));
}

}  // namespace

bool ParseTorchTitanLine(std::string_view line, LineResult* out,
                         Scratch* scratch) {
  size_t at = FindWord(line, "step:");
  if (at == std::string_view::npos) return false;
  // "validate step: N  loss: ..." is an evaluation (evaluation.cc).
  if (at >= 9 && line.substr(at - 9, 9) == "validate ") return false;
  std::string_view rest = line.substr(at + 5);
  while (!rest.empty() && IsBlank(rest.front())) rest.remove_prefix(1);
  long long step = 0;
  size_t n = ParseInt(rest, &step);
  if (n == 0 || (n < rest.size() && !IsBlank(rest[n]))) return false;
  rest.remove_prefix(n);
  IterationRecord& r = out->record;
  r = IterationRecord();
  r.format = TrainingFormat::kTorchTitan;
  r.iteration = step;
  long long ignored = 0;
  // "key: value" pairs; keys are single words, values have no blanks.
  while (true) {
    while (!rest.empty() && IsBlank(rest.front())) rest.remove_prefix(1);
    size_t colon = rest.find(':');
    if (rest.empty() || colon == std::string_view::npos) break;
    std::string_view key = rest.substr(0, colon);
    if (key.find(' ') != std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
    while (!rest.empty() && IsBlank(rest.front())) rest.remove_prefix(1);
    size_t end = 0;
    while (end < rest.size() && !IsBlank(rest[end])) ++end;
    StoreField(key, rest.substr(0, end), true, &r, &scratch->keys, &ignored);
    rest.remove_prefix(end);
  }
  if (!r.Has(IterationField::kLoss)) return false;
  out->kind = LineKind::kRecord;
  return true;
}

bool ParseDeepSpeedLine(std::string_view line, LineResult* out,
                        Scratch* scratch) {
  size_t at = FindWord(line, "global_step=");
  size_t fields_at = at;
  const bool timer = at != std::string_view::npos;
  if (!timer) {
    at = FindWord(line, "step=");
    if (at == std::string_view::npos) return false;
    fields_at = at;
  } else {
    // "epoch=0/micro_step=10/global_step=10, ...": fields start at "epoch=".
    size_t epoch = line.rfind("epoch=", at);
    if (epoch != std::string_view::npos) fields_at = epoch;
  }
  IterationRecord& r = out->record;
  r = IterationRecord();
  r.format = TrainingFormat::kDeepSpeed;
  long long step = -1;
  SplitTopLevel(line.substr(fields_at), [&](std::string_view seg) {
    // "epoch=0/micro_step=10/global_step=10" holds several pairs.
    while (!seg.empty()) {
      size_t eq = seg.find('=');
      if (eq == std::string_view::npos) return;
      size_t next_eq = seg.find('=', eq + 1);
      size_t slash = next_eq == std::string_view::npos
                         ? std::string_view::npos
                         : seg.rfind('/', next_eq);
      std::string_view value = seg.substr(
          eq + 1, slash == std::string_view::npos ? std::string_view::npos
                                                  : slash - eq - 1);
      std::string_view key = seg.substr(0, eq);
      if (key != "micro_step")
        StoreField(key, value, false, &r, &scratch->keys, &step);
      if (slash == std::string_view::npos) return;
      seg.remove_prefix(slash + 1);
    }
  });
  if (step < 0 || r.FieldCount() == 0) return false;
  if (step == 0) {
    // DeepSpeed prints "step=0" with lr=0 while the engine is built, before
    // training starts.
    out->kind = LineKind::kNothing;
    return true;
  }
  r.iteration = step;
  out->kind = LineKind::kRecord;
  out->role = timer ? RecordRole::kEngineTimer : RecordRole::kEngineStep;
  return true;
}

// DeepSpeed's pipeline engine: "steps: 10 loss: 9.9602 iter time (s): 14.912
// samples/sec: 34.3". Values have no blanks, keys may: split at ": " and peel
// each value off the next key.
bool ParseDeepSpeedPipeLine(std::string_view line, LineResult* out,
                            Scratch* scratch) {
  size_t at = FindWord(line, "steps: ");
  if (at == std::string_view::npos) return false;
  std::string_view rest = line.substr(at + 7);
  long long step = 0;
  size_t n = ParseInt(rest, &step);
  if (n == 0 || n >= rest.size() || !IsBlank(rest[n])) return false;
  rest.remove_prefix(n);
  IterationRecord& r = out->record;
  r = IterationRecord();
  r.format = TrainingFormat::kDeepSpeed;
  r.iteration = step;
  long long ignored = 0;
  std::string_view key;
  while (true) {
    size_t sep = rest.find(": ");
    std::string_view piece = rest.substr(0, sep);
    if (!key.empty()) {
      std::string_view value = TrimBlanks(piece);
      size_t blank = value.find(' ');
      if (sep != std::string_view::npos && blank == std::string_view::npos)
        return false;
      StoreField(key, value.substr(0, blank), false, &r, &scratch->keys,
                 &ignored);
      if (blank == std::string_view::npos) break;
      key = TrimBlanks(value.substr(blank + 1));
    } else {
      key = TrimBlanks(piece);
    }
    if (sep == std::string_view::npos) break;
    rest.remove_prefix(sep + 2);
  }
  if (!r.Has(IterationField::kLoss)) return false;
  out->kind = LineKind::kRecord;
  out->role = RecordRole::kEngineStep;
  return true;
}

bool ParseHfTrainerLine(std::string_view line, LineResult* out,
                        Scratch* scratch) {
  size_t total = line.find("Total optimization steps = ");
  if (total != std::string_view::npos) {
    long long steps = 0;
    std::string_view rest = line.substr(total + 27);
    // Newer versions print the number with thousands separators ("1,000").
    double v = 0;
    if (ParseNumber(rest, &v, true) == 0) return false;
    if (!(v >= 0 && v < 9.2e18)) return false;
    steps = static_cast<long long>(v);
    out->kind = LineKind::kTotalSteps;
    out->progress_total = steps;
    return true;
  }
  size_t open = line.find("{'");
  if (open == std::string_view::npos) return false;
  size_t close = line.rfind('}');
  if (close == std::string_view::npos || close < open) return false;
  std::string_view body = line.substr(open + 1, close - open - 1);
  IterationRecord& r = out->record;
  r = IterationRecord();
  r.format = TrainingFormat::kHfTrainer;
  bool has_loss = false, has_train_loss = false, has_eval = false;
  long long ignored = 0;
  SplitTopLevel(body, [&](std::string_view seg) {
    size_t colon = seg.find("': ");
    if (seg.size() < 4 || seg.front() != '\'' ||
        colon == std::string_view::npos)
      return;
    std::string_view key = seg.substr(1, colon - 1);
    std::string_view value = seg.substr(colon + 3);
    if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"')) {
      value = value.substr(
          1, value.size() - 2);  // newer versions quote rounded numbers
    }
    has_loss |= key == "loss";
    has_train_loss |= key == "train_loss";
    has_eval |= key.substr(0, 5) == "eval_";
    StoreField(key, value, false, &r, &scratch->keys, &ignored);
  });
  if (has_loss) {
    out->kind = LineKind::kRecord;
    out->iteration_known = false;
    // A progress bar drawn just before the dict on the same line ("10/100
    // [...]{'loss': ..").
    LineResult bar;
    if (ParseProgressLine(line.substr(0, open), &bar)) {
      out->progress = bar.progress;
      out->progress_total = bar.progress_total;
    }
    return true;
  }
  if (has_train_loss) {  // the final summary dict: {'train_runtime': ...,
                         // 'train_loss': ...}
    out->kind = LineKind::kEvent;
    out->event = TrainingEvent();
    out->event.type = TrainingEventType::kTrainingEnd;
    out->event.format = TrainingFormat::kHfTrainer;
    return true;
  }
  if (has_eval) {  // an evaluation: {'eval_loss': ..., 'eval_runtime': ...}
    out->kind = LineKind::kValidation;
    out->validation = ValidationRecord();
    out->validation.format = TrainingFormat::kHfTrainer;
    out->validation_iteration_known = false;  // the latest step
    std::string norm;
    SplitTopLevel(body, [&](std::string_view seg) {
      size_t colon = seg.find("': ");
      if (seg.size() < 4 || seg.front() != '\'' ||
          colon == std::string_view::npos || seg.substr(1, 5) != "eval_")
        return;
      std::string_view value = seg.substr(colon + 3);
      if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"'))
        value = value.substr(1, value.size() - 2);
      double v = 0;
      if (ParseNumber(value, &v, false) != value.size()) return;
      NormalizeKey(seg.substr(6, colon - 6), &norm);
      if (norm == "loss") {
        out->validation.loss = v;
      } else if (out->validation.extra.size() < 32) {
        out->validation.extra.emplace_back(norm, v);
      }
    });
    return true;
  }
  return false;
}

bool ParseProgressLine(std::string_view line, LineResult* out) {
  size_t bar = line.find("%|");
  if (bar == std::string_view::npos) return false;
  size_t end_bar = line.find('|', bar + 2);
  if (end_bar == std::string_view::npos) return false;
  std::string_view rest = line.substr(end_bar + 1);
  while (!rest.empty() && IsBlank(rest.front())) rest.remove_prefix(1);
  long long n = 0, m = 0;
  size_t k = ParseInt(rest, &n);
  if (k == 0 || k >= rest.size() || rest[k] != '/') return false;
  size_t k2 = ParseInt(rest.substr(k + 1), &m);
  if (k2 == 0) return false;
  out->kind = LineKind::kProgress;
  out->progress = n;
  out->progress_total = m;
  return true;
}

}  // namespace lens::training
