// Field names of the training-log formats and how each maps onto
// IterationRecord.
#ifndef LENS_TRAINING_FIELDS_H_
#define LENS_TRAINING_FIELDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lens/training.h"
#include "training/numbers.h"

namespace lens::training {

// Normalises a printed key for lookup: lower case; '_', '-', '(', ')', '[', ']'
// and runs of blanks become one space; trimmed. "throughput per GPU
// (TFLOP/s/GPU)" -> "throughput per gpu tflop/s/gpu", "[LM]-TFLOPs" -> "lm
// tflops". Writes into `out` (reused buffer) and returns a view of it.
std::string_view NormalizeKey(std::string_view key, std::string* out);

// What the parser does with a known key.
enum class FieldKind : uint8_t {
  kScalar,   // first number -> field (x 10^pow10; '%' -> /100 for ratio fields)
  kPair,     // "X/Y" -> field, second_field
  kMemQuad,  // "usedGB/freeGB/totalGB/ratio%"
  kMemPercent,  // "usedGiB(ratio%)"
  kIteration,   // the step number itself (global_step, step)
  kEpoch,       // epoch number
  kIgnore,      // known, not numeric or not wanted (e.g. "mom", "iteration")
};

struct FieldSpec {
  std::string_view key;  // normalised
  FieldKind kind;
  IterationField field;
  IterationField second_field;
  int pow10;  // shift the printed decimal (3: seconds -> ms)
};

// The spec for a normalised key, or nullptr for an unknown key.
const FieldSpec* LookupField(std::string_view normalized_key);

// Applies `value` printed under `spec` to `record`. Returns false when the
// value's shape does not fit the spec (the caller then keeps it as an extra if
// it is numeric).
bool ApplyField(const FieldSpec& spec, const Value& value,
                IterationRecord* record);

// Remembers the printed keys seen so far (frameworks print the same keys on
// every line), so the hot path skips normalisation and table lookup: first the
// entry after the last hit (keys come in the same order each line), else a
// hash table. Bounded: cleared past kMaxEntries. Not thread-safe; one per
// parser.
class KeyCache {
 public:
  struct Entry {
    std::string raw;         // the key as printed
    std::string normalized;  // NormalizeKey(raw)
    const FieldSpec* spec;   // nullptr: unknown key (kept as an extra)
  };
  const Entry& Lookup(std::string_view raw_key);

 private:
  static constexpr size_t kMaxEntries = 256;
  static constexpr size_t kSlots = 512;  // open addressing, load <= 1/2
  std::vector<Entry> entries_;
  uint16_t slots_[kSlots] = {};  // entry index + 1, 0: empty
  size_t next_ =
      0;  // where the next search starts: keys come in the same order each line
};

// Stores a known or unknown key/value pair: typed field when known, `extra`
// otherwise. Values that are not numbers are ignored. `iteration` receives
// kIteration fields. Returns false when the value of a known key, or an empty
// value, does not parse (a malformed field).
bool StoreField(std::string_view raw_key, std::string_view raw_value,
                bool allow_grouping, IterationRecord* record, KeyCache* keys,
                long long* iteration);

}  // namespace lens::training

#endif  // LENS_TRAINING_FIELDS_H_
