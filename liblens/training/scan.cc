#include "training/scan.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace lens::training {
namespace {

struct Needle {
  const char* text;
  size_t size;
};

// Trigger words. Keep in sync with the formats: every accepted line contains
// one of them.
constexpr Needle kNeedles[] = {
    {"iteration", 9}, {"step", 4},    {"loss", 4},
    {"heckpoint", 9}, {"raining", 7}, {"%|", 2},
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
// For each needle compare its first byte at i and its last byte at i+len-1 over
// a vector of positions at once (W. Mula's "generic SIMD" substring search), OR
// the masks of all needles, and verify the few surviving positions with memcmp.
// Written once for SSE2 (the x86-64 baseline) and once for AVX2, chosen at run
// time. The loop body, for a vector type of W bytes. A macro rather than a
// template: GCC will not inline functions of another target ("avx2") into a
// template instance.
#define LENS_FIND_TRIGGER_BODY(V, W, SET1, LOAD, EQ, AND, OR, MASK)       \
  if (n < (W) + kMaxNeedle) return FindTriggerScalar(p, 0, n);            \
  const V i_first = SET1('i'), i_last = SET1('n'); /* iteration */        \
  const V s_first = SET1('s'), s_last = SET1('p'); /* step */             \
  const V l_first = SET1('l'), l_last = SET1('s'); /* loss */             \
  const V h_first = SET1('h'), h_last = SET1('t'); /* heckpoint */        \
  const V r_first = SET1('r'), r_last = SET1('g'); /* raining */          \
  const V pct = SET1('%'), bar = SET1('|');        /* %| */               \
  size_t i = 0;                                                           \
  const size_t limit = n - (W)-kMaxNeedle + 1;                            \
  for (; i < limit; i += (W)) {                                           \
    const V b0 = LOAD(p + i), b1 = LOAD(p + i + 1), b3 = LOAD(p + i + 3); \
    const V b6 = LOAD(p + i + 6), b8 = LOAD(p + i + 8);                   \
    V m = AND(EQ(b0, i_first), EQ(b8, i_last));                           \
    m = OR(m, AND(EQ(b0, s_first), EQ(b3, s_last)));                      \
    m = OR(m, AND(EQ(b0, l_first), EQ(b3, l_last)));                      \
    m = OR(m, AND(EQ(b0, h_first), EQ(b8, h_last)));                      \
    m = OR(m, AND(EQ(b0, r_first), EQ(b6, r_last)));                      \
    m = OR(m, AND(EQ(b0, pct), EQ(b1, bar)));                             \
    uint32_t mask = static_cast<uint32_t>(MASK(m));                       \
    while (mask != 0) {                                                   \
      const size_t at = i + static_cast<size_t>(__builtin_ctz(mask));     \
      if (MatchesAt(p + at, n - at)) return at;                           \
      mask &= mask - 1;                                                   \
    }                                                                     \
  }                                                                       \
  return FindTriggerScalar(p, i, n);

#define LENS_LOAD128(x) _mm_loadu_si128(reinterpret_cast<const __m128i*>(x))
#define LENS_LOAD256(x) _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x))

size_t FindTriggerSse2(const char* p, size_t n) {
  LENS_FIND_TRIGGER_BODY(__m128i, 16, _mm_set1_epi8, LENS_LOAD128,
                         _mm_cmpeq_epi8, _mm_and_si128, _mm_or_si128,
                         _mm_movemask_epi8)
}

__attribute__((target("avx2"))) size_t FindTriggerAvx2(const char* p, size_t n){
    LENS_FIND_TRIGGER_BODY(__m256i, 32, _mm256_set1_epi8, LENS_LOAD256,
                           _mm256_cmpeq_epi8, _mm256_and_si256, _mm256_or_si256,
                           _mm256_movemask_epi8)}
#undef LENS_LOAD128
#undef LENS_LOAD256
#undef LENS_FIND_TRIGGER_BODY

size_t FindTrigger(std::string_view text) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2 ? FindTriggerAvx2(text.data(), text.size())
              : FindTriggerSse2(text.data(), text.size());
}

size_t CountNewlines(std::string_view text) {
  const char* p = text.data();
  const size_t n = text.size();
  const __m128i nl = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  size_t count = 0, i = 0;
  // Per-lane byte counters (cmpeq gives -1 per match), summed before they can
  // overflow.
  while (i + 16 <= n) {
    __m128i acc = _mm_setzero_si128();
    const size_t blocks = std::min<size_t>((n - i) / 16, 255);
    for (size_t b = 0; b < blocks; ++b, i += 16) {
      const __m128i v =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
    }
    const __m128i sums = _mm_sad_epu8(acc, zero);
    count +=
        static_cast<size_t>(_mm_cvtsi128_si32(sums)) +
        static_cast<size_t>(_mm_cvtsi128_si32(_mm_unpackhi_epi64(sums, sums)));
  }
  for (; i < n; ++i) count += p[i] == '\n';
  return count;
}
#else
size_t FindTrigger(std::string_view text) {
  return FindTriggerScalar(text.data(), 0, text.size());
}

size_t CountNewlines(std::string_view text) {
  size_t count = 0;
  for (char c : text) count += c == '\n';
  return count;
}
#endif

}  // namespace lens::training
