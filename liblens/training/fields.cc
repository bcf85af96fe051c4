#include "training/fields.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace lens::training {
namespace {

using F = IterationField;
using K = FieldKind;
constexpr F kNone = F::kCount;

// Printed key (normalised) -> field. Sources of each key:
// docs/training-log-schema.md.
constexpr FieldSpec kSpecs[] = {
    // Megatron-LM / Megatron-DeepSpeed / Primus
    {"consumed samples", K::kScalar, F::kConsumedSamples, kNone, 0},
    {"consumed tokens", K::kScalar, F::kConsumedTokens, kNone, 0},
    {"elapsed time per iteration ms", K::kPair, F::kElapsedMs, F::kElapsedMsAvg,
     0},
    {"elapsed time per iteration s", K::kPair, F::kElapsedMs, F::kElapsedMsAvg,
     3},
    {"learning rate", K::kScalar, F::kLearningRate, kNone, 0},
    {"global batch size", K::kScalar, F::kGlobalBatchSize, kNone, 0},
    {"lm loss", K::kScalar, F::kLoss, kNone, 0},
    {"loss scale", K::kScalar, F::kLossScale, kNone, 0},
    {"grad norm", K::kScalar, F::kGradNorm, kNone, 0},
    {"params norm", K::kScalar, F::kParamsNorm, kNone, 0},
    {"num zeros", K::kScalar, F::kNumZeros, kNone, 0},
    {"number of skipped iterations", K::kScalar, F::kSkippedIterations, kNone,
     0},
    {"number of nan iterations", K::kScalar, F::kNanIterations, kNone, 0},
    {"throughput per gpu tflop/s/gpu", K::kPair, F::kTflopsPerGpu,
     F::kTflopsPerGpuAvg, 0},
    {"tflops", K::kScalar, F::kTflopsPerGpu, kNone, 0},
    {"lm tflops", K::kScalar, F::kTflopsPerGpu, kNone, 0},
    {"tokens per gpu tokens/s/gpu", K::kPair, F::kTokensPerSPerGpu,
     F::kTokensPerSPerGpuAvg, 0},
    {"tokens per gpu per second tgs", K::kScalar, F::kTokensPerSPerGpu, kNone,
     0},
    {"samples per second", K::kScalar, F::kSamplesPerS, kNone, 0},
    {"actual seqlen", K::kScalar, F::kActualSeqlen, kNone, 0},
    {"hip mem usage/free/total/usage ratio", K::kMemQuad, F::kMemUsedGb, kNone,
     0},
    {"rocm mem usage/free/total/usage ratio", K::kMemQuad, F::kMemUsedGb, kNone,
     0},
    {"mem usages", K::kScalar, F::kMemUsageRatio, kNone, 0},
    // Primus 2026 (print_rank_last patch): "compute per GPU (TFLOP/s/GPU):
    // X (avg Y)", "tokens/s/GPU inst/harmonic mean: X/Y", and the rank with
    // the most memory, whose "rank-N " prefix the Megatron parser moves into
    // kMaxMemRank before the lookup.
    {"compute per gpu tflop/s/gpu", K::kPair, F::kTflopsPerGpu,
     F::kTflopsPerGpuAvg, 0},
    {"tokens/s/gpu inst/harmonic mean", K::kPair, F::kTokensPerSPerGpu,
     F::kTokensPerSPerGpuAvg, 0},
    {"max mem usage/usage ratio", K::kPair, F::kMaxMemUsedGb,
     F::kMaxMemUsageRatio, 0},
    {"rocm max mem usage/usage ratio", K::kPair, F::kMaxMemUsedGb,
     F::kMaxMemUsageRatio, 0},
    {"iteration", K::kIgnore, kNone, kNone, 0},
    // NeMo 2 / Lightning
    {"reduced train loss", K::kScalar, F::kLoss, kNone, 0},
    {"train step timing in s", K::kScalar, F::kElapsedMs, kNone, 3},
    {"lr", K::kScalar, F::kLearningRate, kNone, 0},
    {"global step", K::kIteration, kNone, kNone, 0},
    {"tflops per gpu", K::kScalar, F::kTflopsPerGpu, kNone, 0},
    // TorchTitan
    {"step", K::kIteration, kNone, kNone, 0},
    {"loss", K::kScalar, F::kLoss, kNone, 0},
    {"memory", K::kMemPercent, F::kMemUsedGb, F::kMemUsageRatio, 0},
    {"tps", K::kScalar, F::kTokensPerSPerGpu, kNone, 0},
    {"mfu", K::kScalar, F::kMfu, kNone, 0},
    // Hugging Face Trainer
    {"epoch", K::kEpoch, F::kEpoch, kNone, 0},
    {"num input tokens seen", K::kScalar, F::kConsumedTokens, kNone, 0},
    // DeepSpeed
    {"skipped", K::kScalar, F::kSkippedIterations, kNone, 0},
    {"currsamplespersec", K::kScalar, F::kSamplesPerS, kNone, 0},
    {"memallocated", K::kScalar, F::kMemUsedGb, kNone, 0},
    {"maxmemallocated", K::kScalar, F::kMemMaxAllocatedGb, kNone, 0},
    {"mom", K::kIgnore, kNone, kNone, 0},
    {"iter time s", K::kScalar, F::kElapsedMs, kNone, 3},
    {"samples/sec", K::kScalar, F::kSamplesPerS, kNone, 0},
};

constexpr bool IsRatio(F f) {
  return f == F::kMfu || f == F::kMemUsageRatio || f == F::kMaxMemUsageRatio;
}

// Scale for a printed unit: memory to GB (binary factors, exact in a double),
// time to the field's base and percent to a ratio (powers of ten, applied to
// the printed decimal).
struct UnitScale {
  double factor = 1;
  int pow10 = 0;
};
UnitScale ScaleFor(F f, std::string_view unit) {
  if (unit.empty()) return {};
  if (unit == "%") return IsRatio(f) ? UnitScale{1, -2} : UnitScale{};
  if (f == F::kMemUsedGb || f == F::kMemFreeGb || f == F::kMemTotalGb ||
      f == F::kMemMaxAllocatedGb || f == F::kMaxMemUsedGb) {
    if (unit == "MB" || unit == "MiB") return {1.0 / 1024, 0};
    if (unit == "TB" || unit == "TiB") return {1024, 0};
    if (unit == "KB" || unit == "KiB") return {1.0 / (1024 * 1024), 0};
    return {};
  }
  if (f == F::kElapsedMs) {
    if (unit == "s") return {1, 3};
    if (unit == "us") return {1, -3};
  }
  return {};
}

// `pow10` of the spec (1000: seconds to ms) and of the unit.
void SetScaled(IterationRecord* r, F f, const Value& v, int i, int pow10) {
  const UnitScale u = ScaleFor(f, v.unit[i]);
  r->Set(f, ShiftDecimal(v.text[i], v.num[i], pow10 + u.pow10) * u.factor);
}

}  // namespace

namespace {

// Byte -> normalised byte: 0 for separators, lower case for letters, itself
// otherwise.
struct KeyMap {
  char to[256];
  constexpr KeyMap() : to() {
    for (int c = 0; c < 256; ++c) to[c] = static_cast<char>(c);
    for (int c = 'A'; c <= 'Z'; ++c) to[c] = static_cast<char>(c - 'A' + 'a');
    for (unsigned char c : {'_', '-', '(', ')', '[', ']', ' ', '\t', '\'', '"'})
      to[c] = 0;
  }
};
constexpr KeyMap kKeyMap;

}  // namespace

std::string_view NormalizeKey(std::string_view key, std::string* out) {
  out->resize(key.size());
  char* dst = out->data();
  size_t n = 0;
  bool pending_space = false;
  for (unsigned char raw : key) {
    const char c = kKeyMap.to[raw];
    if (c == 0) {
      pending_space = n > 0;
      continue;
    }
    if (pending_space) dst[n++] = ' ';
    pending_space = false;
    dst[n++] = c;
  }
  out->resize(n);
  return *out;
}

const FieldSpec* LookupField(std::string_view key) {
  for (const FieldSpec& s : kSpecs) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

bool ApplyField(const FieldSpec& spec, const Value& v, IterationRecord* r) {
  switch (spec.kind) {
    case K::kScalar:
      SetScaled(r, spec.field, v, 0, spec.pow10);
      return true;
    case K::kPair:
      SetScaled(r, spec.field, v, 0, spec.pow10);
      if (v.count >= 2) SetScaled(r, spec.second_field, v, 1, spec.pow10);
      return true;
    case K::kMemQuad: {
      if (v.count != 4) return false;
      constexpr F kQuad[] = {F::kMemUsedGb, F::kMemFreeGb, F::kMemTotalGb,
                             F::kMemUsageRatio};
      for (int i = 0; i < 4; ++i) SetScaled(r, kQuad[i], v, i, 0);
      // A ratio printed without '%' is already 0..1 only if it is <= 1.
      if (v.unit[3].empty() && v.num[3] > 1)
        r->Set(F::kMemUsageRatio, ShiftDecimal(v.text[3], v.num[3], -2));
      return true;
    }
    case K::kMemPercent:
      SetScaled(r, spec.field, v, 0, 0);
      if (v.count >= 2) SetScaled(r, spec.second_field, v, 1, 0);
      return true;
    case K::kEpoch:
      r->Set(F::kEpoch, v.num[0]);
      return true;
    case K::kIteration:
    case K::kIgnore:
      return true;
  }
  return false;
}

const KeyCache::Entry& KeyCache::Lookup(std::string_view raw_key) {
  if (next_ < entries_.size() && entries_[next_].raw == raw_key)
    return entries_[next_++];
  // FNV-1a over the key's bytes.
  uint32_t h = 2166136261u;
  for (unsigned char c : raw_key) h = (h ^ c) * 16777619u;
  size_t slot = h % kSlots;
  for (; slots_[slot] != 0; slot = (slot + 1) % kSlots) {
    const size_t i = slots_[slot] - 1u;
    if (entries_[i].raw == raw_key) {
      next_ = i + 1;
      return entries_[i];
    }
  }
  if (entries_.size() >= kMaxEntries) {
    entries_.clear();
    std::fill(std::begin(slots_), std::end(slots_), 0);
    slot = h % kSlots;
  }
  Entry e;
  e.raw = std::string(raw_key);
  NormalizeKey(raw_key, &e.normalized);
  e.spec = LookupField(e.normalized);
  entries_.push_back(std::move(e));
  slots_[slot] = static_cast<uint16_t>(entries_.size());
  next_ = entries_.size();
  return entries_.back();
}

bool StoreField(std::string_view raw_key, std::string_view raw_value,
                bool allow_grouping, IterationRecord* record, KeyCache* keys,
                long long* iteration) {
  const KeyCache::Entry& entry = keys->Lookup(raw_key);
  std::string_view key = entry.normalized;
  if (key.empty()) return false;
  const FieldSpec* spec = entry.spec;
  if (spec != nullptr && spec->kind == K::kIgnore) return true;
  Value value;
  // DeepSpeed prints learning rates per parameter group:
  // "lr=[9.6e-06, 9.6e-06]".
  std::string_view rv = TrimBlanks(raw_value);
  if (!rv.empty() && rv.front() == '[') {
    size_t end = FindEither(rv, ',', ']');
    if (end == std::string_view::npos) return false;
    rv = rv.substr(1, end - 1);
  }
  if (!ParseValue(rv, &value, allow_grouping))
    return spec == nullptr && !rv.empty();
  if (spec != nullptr) {
    if (spec->kind == K::kIteration) {
      if (value.count == 1 && value.num[0] >= 0 && value.num[0] < 9.2e18 &&
          value.num[0] == std::floor(value.num[0])) {
        *iteration = static_cast<long long>(value.num[0]);
      }
      return true;
    }
    if (ApplyField(*spec, value, record)) return true;
  }
  if (record->extra.size() < 64)
    record->extra.emplace_back(std::string(key), value.num[0]);
  return true;
}

}  // namespace lens::training
