#include "training/scan.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace lens::training {
namespace {

size_t Reference(std::string_view s) {
  size_t best = s.size();
  for (std::string_view w :
       {"iteration", "step", "loss", "heckpoint", "raining", "%|"}) {
    best = std::min(best, std::min(s.find(w), s.size()));
  }
  return best;
}

TEST(FindTriggerTest, FindsEveryTriggerWordAtEveryOffset) {
  for (std::string_view w :
       {"iteration", "step", "loss", "heckpoint", "raining", "%|"}) {
    for (size_t pad = 0; pad < 70; ++pad) {
      std::string s(pad, 'x');
      s += w;
      s += std::string(pad % 7, 'y');
      EXPECT_EQ(FindTrigger(s), pad) << w << " at " << pad;
    }
  }
}

TEST(FindTriggerTest, MatchesReferenceOnRandomText) {
  std::mt19937 rng(7);
  const std::string alphabet = "iterationsplck%|gh \n";
  for (int round = 0; round < 2000; ++round) {
    std::string s(rng() % 200, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    ASSERT_EQ(FindTrigger(s), Reference(s)) << s;
#if defined(__SSE2__)
    ASSERT_EQ(FindTriggerSse2(s.data(), s.size()), Reference(s)) << s;
    if (__builtin_cpu_supports("avx2")) {
      ASSERT_EQ(FindTriggerAvx2(s.data(), s.size()), Reference(s)) << s;
    }
#endif
  }
}

TEST(FindTriggerTest, ReturnsSizeWithoutTrigger) {
  std::string s(1000, 'a');
  EXPECT_EQ(FindTrigger(s), s.size());
  EXPECT_EQ(FindTrigger(""), 0u);
  EXPECT_EQ(FindTrigger("ste"), 3u);
}

TEST(CountNewlinesTest, CountsAcrossBlockBoundaries) {
  std::string s;
  size_t expected = 0;
  for (int i = 0; i < 100; ++i) {
    s += std::string(static_cast<size_t>(i % 17), 'a');
    if (i % 3 != 0) {
      s += '\n';
      ++expected;
    }
  }
  EXPECT_EQ(CountNewlines(s), expected);
}

}  // namespace
}  // namespace lens::training
