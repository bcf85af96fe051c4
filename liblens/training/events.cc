// Event lines: training start, checkpoint save start/end, training end. The
// patterns are data; docs/training-log-schema.md lists the framework and
// version each one comes from.
#include <cmath>

#include "training/formats.h"
#include "training/numbers.h"

namespace lens::training {
namespace {

using T = TrainingEventType;
using Fmt = TrainingFormat;

enum class Extract : uint8_t {
  kNone,
  kAtEnd,           // the pattern must end the line ("training ...")
  kIterationPath,   // "... iteration N to PATH"
  kPath,            // "... PATH"
  kStepParenPath,   // "... step N (PATH) ..." (NeMo async finalize)
  kStep,            // "... step N"
  kSecondsAfterIn,  // "... in 3.21 seconds"
  kGlobalStepWord,  // "... global_step200 ..." before the pattern (DeepSpeed)
  kPathGlobalStep,  // "... PATH" where PATH holds "global_stepN" (DeepSpeed)
};

struct EventPattern {
  std::string_view text;
  T type;
  Fmt format;
  Extract extract;
};

// More specific patterns first.
constexpr EventPattern kPatterns[] = {
    {"successfully saved checkpoint", T::kCheckpointSaveEnd, Fmt::kMegatron,
     Extract::kIterationPath},
    {"Successfully saved checkpoint", T::kCheckpointSaveEnd, Fmt::kUnknown,
     Extract::kIterationPath},
    {"saving checkpoint at iteration", T::kCheckpointSaveStart, Fmt::kMegatron,
     Extract::kIterationPath},
    {"Async checkpoint save for step", T::kCheckpointSaveEnd, Fmt::kNeMo,
     Extract::kStepParenPath},
    {"Scheduled async checkpoint save for", T::kCheckpointSaveStart, Fmt::kNeMo,
     Extract::kPath},
    {"Finished saving the checkpoint", T::kCheckpointSaveEnd, Fmt::kTorchTitan,
     Extract::kSecondsAfterIn},
    {"Saving a full checkpoint at last step", T::kCheckpointSaveStart,
     Fmt::kTorchTitan, Extract::kStep},
    {"Saving the checkpoint", T::kCheckpointSaveStart, Fmt::kTorchTitan,
     Extract::kNone},
    {"Saving model checkpoint to", T::kCheckpointSaveStart, Fmt::kHfTrainer,
     Extract::kPath},
    {"Saving model checkpoint:", T::kCheckpointSaveStart, Fmt::kDeepSpeed,
     Extract::kPathGlobalStep},
    {"is ready now!", T::kCheckpointSaveEnd, Fmt::kDeepSpeed,
     Extract::kGlobalStepWord},
    {"Training starts at step", T::kTrainingStart, Fmt::kTorchTitan,
     Extract::kStep},
    {"***** Running training *****", T::kTrainingStart, Fmt::kUnknown,
     Extract::kNone},
    {"[after training is done]", T::kTrainingEnd, Fmt::kMegatron,
     Extract::kNone},
    {"[exiting program at iteration", T::kTrainingEnd, Fmt::kMegatron,
     Extract::kStep},
    {"[exiting program after", T::kTrainingEnd, Fmt::kMegatron, Extract::kNone},
    {"Training completed", T::kTrainingEnd, Fmt::kUnknown, Extract::kNone},
    {"`Trainer.fit` stopped", T::kTrainingEnd, Fmt::kNeMo, Extract::kNone},
    {"[before the start of training step]", T::kTrainingStart, Fmt::kMegatron,
     Extract::kNone},
    {"training ...", T::kTrainingStart, Fmt::kMegatron, Extract::kAtEnd},
};

constexpr size_t kMaxPath = 4096;

// A path ends at a blank (Megatron appends " in torch_dist format" or " [ t
// 1/8, p 1/1 ]").
std::string_view PathToken(std::string_view s) {
  s = SkipBlanks(s);
  size_t end = 0;
  while (end < s.size() && !IsBlank(s[end])) ++end;
  std::string_view path = s.substr(0, std::min(end, kMaxPath));
  while (!path.empty() && (path.back() == '.' || path.back() == ','))
    path.remove_suffix(1);
  return path;
}

void Fill(std::string_view before, std::string_view rest, Extract how,
          TrainingEvent* e) {
  long long n = 0;
  switch (how) {
    case Extract::kGlobalStepWord: {
      size_t at = before.rfind("global_step");
      if (at != std::string_view::npos &&
          ParseInt(before.substr(at + 11), &n) > 0) {
        e->iteration = n;
      }
      return;
    }
    case Extract::kNone:
    case Extract::kAtEnd:
      return;
    case Extract::kIterationPath: {
      size_t it = rest.find("iteration");
      std::string_view r =
          it == std::string_view::npos ? rest : rest.substr(it + 9);
      r = SkipBlanks(r);
      size_t k = ParseInt(r, &n);
      if (k > 0) e->iteration = n;
      size_t to = r.find(" to ");
      if (to != std::string_view::npos)
        e->path = std::string(PathToken(r.substr(to + 4)));
      return;
    }
    case Extract::kPath:
      e->path = std::string(PathToken(rest));
      return;
    case Extract::kPathGlobalStep: {
      e->path = std::string(PathToken(rest));
      size_t at = e->path.find("global_step");
      if (at != std::string::npos &&
          ParseInt(std::string_view(e->path).substr(at + 11), &n) > 0) {
        e->iteration = n;
      }
      return;
    }
    case Extract::kStepParenPath: {
      std::string_view r = SkipBlanks(rest);
      if (ParseInt(r, &n) > 0) e->iteration = n;
      size_t open = r.find('('), close = r.rfind(')');
      if (open != std::string_view::npos && close != std::string_view::npos &&
          close > open) {
        e->path = std::string(
            r.substr(open + 1, std::min(close - open - 1, kMaxPath)));
      }
      return;
    }
    case Extract::kStep: {
      size_t step = rest.rfind("step");
      std::string_view r =
          step == std::string_view::npos ? rest : rest.substr(step + 4);
      r = SkipBlanks(r);
      if (ParseInt(r, &n) > 0) e->iteration = n;
      return;
    }
    case Extract::kSecondsAfterIn: {
      size_t in = rest.rfind("in ");
      double seconds = 0;
      if (in != std::string_view::npos &&
          ParseNumber(rest.substr(in + 3), &seconds) > 0 &&
          std::isfinite(seconds)) {
        e->duration_s = seconds;
      }
      return;
    }
  }
}

}  // namespace

bool ParseEventLine(std::string_view line, LineResult* out) {
  for (const EventPattern& p : kPatterns) {
    size_t at = line.find(p.text);
    if (at == std::string_view::npos) continue;
    std::string_view rest = line.substr(at + p.text.size());
    if (p.extract == Extract::kAtEnd && !TrimBlanks(rest).empty()) continue;
    out->kind = LineKind::kEvent;
    out->event = TrainingEvent();
    out->event.type = p.type;
    out->event.format = p.format;
    Fill(line.substr(0, at), rest, p.extract, &out->event);
    return true;
  }
  return false;
}

}  // namespace lens::training
