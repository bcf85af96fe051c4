// Fast pre-filter for training logs: finds lines that may hold a record or an
// event, so that the (much slower) line parsers only see those. Pure functions
// over byte ranges.
#ifndef LENS_TRAINING_SCAN_H_
#define LENS_TRAINING_SCAN_H_

#include <cstddef>
#include <string_view>

namespace lens::training {

// Returns the offset of the first occurrence in `text` of any trigger word
// ("iteration", "step", "loss", "heckpoint", "raining", "%|"), or text.size()
// when there is none. Every line that any format parser accepts contains one of
// these words.
size_t FindTrigger(std::string_view text);

#if defined(__SSE2__)
// The two x86 implementations FindTrigger chooses between (exposed for tests).
// The AVX2 one may only be called when the CPU supports AVX2.
size_t FindTriggerSse2(const char* p, size_t n);
size_t FindTriggerAvx2(const char* p, size_t n);
#endif

// Number of '\n' bytes in text.
size_t CountNewlines(std::string_view text);

}  // namespace lens::training

#endif  // LENS_TRAINING_SCAN_H_
