// Megatron-LM, Megatron-DeepSpeed, Primus and NeMo 2 iteration lines:
//   " iteration      424/   40000 | consumed samples: 27136 | ... | lm
//   loss: 4.447942E+00 |" "iteration=       1/  317892 | consumed_samples=  768
//   | lm loss=11.133188 | ..." "Training epoch 1, iteration 0/999 |
//   lr: 2.999e-06 | global_step: 19 | ..."
#include <string.h>

#include <cmath>

#include "training/fields.h"
#include "training/formats.h"
#include "training/numbers.h"

namespace lens::training {
namespace {

size_t SkipBlanks(std::string_view s, size_t i) {
  while (i < s.size() && IsBlank(s[i])) ++i;
  return i;
}

// At s[i] (just after "iteration"): "[ =]* N [ ]* / [ ]* M". Sets the end of M.
bool ParseCounter(std::string_view s, size_t i, long long* n, long long* m,
                  size_t* end) {
  size_t j = i;
  while (j < s.size() && (IsBlank(s[j]) || s[j] == '=')) ++j;
  if (j == i) return false;
  size_t k = ParseInt(s.substr(j), n);
  if (k == 0) return false;
  j = SkipBlanks(s, j + k);
  if (j >= s.size() || s[j] != '/') return false;
  j = SkipBlanks(s, j + 1);
  k = ParseInt(s.substr(j), m);
  if (k == 0) return false;
  *end = j + k;
  return true;
}

}  // namespace

bool ParseMegatronLine(std::string_view line, LineResult* out,
                       Scratch* scratch) {
  size_t pos = 0;
  long long n = 0, m = 0;
  size_t fields_at = 0;
  // Every iteration line has "iteration N/ M |"; most other lines have no bar
  // at all, and memchr rules them out cheaper than memmem.
  if (memchr(line.data(), '|', line.size()) == nullptr) return false;
  while (true) {
    const void* hit =
        memmem(line.data() + pos, line.size() - pos, "iteration", 9);
    if (hit == nullptr) return false;
    pos = static_cast<size_t>(static_cast<const char*>(hit) - line.data());
    if (ParseCounter(line, pos + 9, &n, &m, &fields_at)) {
      size_t j = SkipBlanks(line, fields_at);
      if (j < line.size() && line[j] == '|') break;
    }
    pos += 9;
  }
  IterationRecord& r = out->record;
  r = IterationRecord();
  r.format = TrainingFormat::kMegatron;
  r.iteration = n;
  r.Set(IterationField::kTargetIteration, static_cast<double>(m));

  long long global_step = -1;
  std::string_view rest = line.substr(fields_at);
  while (!rest.empty()) {
    size_t bar = rest.find('|');
    std::string_view seg = rest.substr(0, bar);
    rest = bar == std::string_view::npos ? std::string_view()
                                         : rest.substr(bar + 1);
    size_t sep = FindEither(seg, ':', '=');
    if (sep == std::string_view::npos) {
      // Only the blank tail after the last '|' is expected; anything else is a
      // cut or glued line.
      if (!TrimBlanks(seg).empty()) out->malformed = true;
      continue;
    }
    std::string_view key = seg.substr(0, sep);
    // Primus: "rank-3 rocm max mem usage/usage_ratio": the rank is a value.
    if (std::string_view k = TrimBlanks(key); k.substr(0, 5) == "rank-") {
      long long rank = 0;
      const size_t n = ParseInt(k.substr(5), &rank);
      if (n > 0 && 5 + n < k.size() && IsBlank(k[5 + n])) {
        r.Set(IterationField::kMaxMemRank, static_cast<double>(rank));
        key = k.substr(5 + n);
      }
    }
    if (!StoreField(key, seg.substr(sep + 1), false, &r, &scratch->keys,
                    &global_step)) {
      out->malformed = true;
    }
  }

  // NeMo 2 / Lightning: "Training epoch E, iteration i/n" counts batches within
  // the epoch; global_step is the step.
  size_t epoch_at = line.rfind("Training epoch ", pos);
  if (epoch_at != std::string_view::npos) {
    r.format = TrainingFormat::kNeMo;
    long long epoch = 0;
    if (ParseInt(line.substr(epoch_at + 15), &epoch) > 0) {
      r.Set(IterationField::kEpoch, static_cast<double>(epoch));
    }
    if (global_step >= 0) {
      r.iteration = global_step;
      r.Clear(IterationField::kTargetIteration);
    }
  }
  out->kind = LineKind::kRecord;
  return true;
}

}  // namespace lens::training
