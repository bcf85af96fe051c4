#include "training/scan.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace lens::training {
namespace {

struct Needle {
  const char* text;
  size_t size;
};

// Trigger words. Keep in sync with the formats: every accepted line contains one of them.
constexpr Needle kNeedles[] = {
    {"iteration", 9}, {"step", 4}, {"loss", 4}, {"heckpoint", 9}, {"raining", 7}, {"%|", 2},
};
constexpr size_t kMaxNeedle = 9;

bool MatchesAt(const char* p, size_t avail) {
  for (const Needle& n : kNeedles) {
    if (n.size <= avail && std::memcmp(p, n.text, n.size) == 0) return true;
  }
  return false;
}

size_t FindTriggerScalar(const char* p, size_t begin, size_t n) {
  for (size_t i = begin; i < n; ++i) {
    if (MatchesAt(p + i, n - i)) return i;
  }
  return n;
}

}  // namespace

#if defined(__SSE2__)
// For each needle compare its first byte at i and its last byte at i+len-1 over 16 positions
// at once (W. Mula's "generic SIMD" substring search), OR the masks of all needles, and verify
// the few surviving positions with memcmp.
size_t FindTrigger(std::string_view text) {
  const char* p = text.data();
  const size_t n = text.size();
  if (n < 16 + kMaxNeedle) return FindTriggerScalar(p, 0, n);
  const __m128i i_first = _mm_set1_epi8('i'), i_last = _mm_set1_epi8('n');   // iteration
  const __m128i s_first = _mm_set1_epi8('s'), s_last = _mm_set1_epi8('p');   // step
  const __m128i l_first = _mm_set1_epi8('l'), l_last = _mm_set1_epi8('s');   // loss
  const __m128i h_first = _mm_set1_epi8('h'), h_last = _mm_set1_epi8('t');   // heckpoint
  const __m128i r_first = _mm_set1_epi8('r'), r_last = _mm_set1_epi8('g');   // raining
  const __m128i pct = _mm_set1_epi8('%'), bar = _mm_set1_epi8('|');          // %|
  size_t i = 0;
  const size_t limit = n - 16 - kMaxNeedle + 1;
  for (; i < limit; i += 16) {
    const __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 1));
    const __m128i b3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 3));
    const __m128i b6 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 6));
    const __m128i b8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 8));
    __m128i m = _mm_and_si128(_mm_cmpeq_epi8(b0, i_first), _mm_cmpeq_epi8(b8, i_last));
    m = _mm_or_si128(m, _mm_and_si128(_mm_cmpeq_epi8(b0, s_first), _mm_cmpeq_epi8(b3, s_last)));
    m = _mm_or_si128(m, _mm_and_si128(_mm_cmpeq_epi8(b0, l_first), _mm_cmpeq_epi8(b3, l_last)));
    m = _mm_or_si128(m, _mm_and_si128(_mm_cmpeq_epi8(b0, h_first), _mm_cmpeq_epi8(b8, h_last)));
    m = _mm_or_si128(m, _mm_and_si128(_mm_cmpeq_epi8(b0, r_first), _mm_cmpeq_epi8(b6, r_last)));
    m = _mm_or_si128(m, _mm_and_si128(_mm_cmpeq_epi8(b0, pct), _mm_cmpeq_epi8(b1, bar)));
    uint32_t mask = static_cast<uint32_t>(_mm_movemask_epi8(m));
    while (mask != 0) {
      const size_t at = i + static_cast<size_t>(__builtin_ctz(mask));
      if (MatchesAt(p + at, n - at)) return at;
      mask &= mask - 1;
    }
  }
  return FindTriggerScalar(p, i, n);
}

size_t CountNewlines(std::string_view text) {
  const char* p = text.data();
  const size_t n = text.size();
  const __m128i nl = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  size_t count = 0, i = 0;
  // Per-lane byte counters (cmpeq gives -1 per match), summed before they can overflow.
  while (i + 16 <= n) {
    __m128i acc = _mm_setzero_si128();
    const size_t blocks = std::min<size_t>((n - i) / 16, 255);
    for (size_t b = 0; b < blocks; ++b, i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
    }
    const __m128i sums = _mm_sad_epu8(acc, zero);
    count += static_cast<size_t>(_mm_cvtsi128_si32(sums)) +
             static_cast<size_t>(_mm_cvtsi128_si32(_mm_unpackhi_epi64(sums, sums)));
  }
  for (; i < n; ++i) count += p[i] == '\n';
  return count;
}
#else
size_t FindTrigger(std::string_view text) { return FindTriggerScalar(text.data(), 0, text.size()); }

size_t CountNewlines(std::string_view text) {
  size_t count = 0;
  for (char c : text) count += c == '\n';
  return count;
}
#endif

}  // namespace lens::training
