#include "training/line.h"

#include <gtest/gtest.h>

namespace lens::training {
namespace {

TEST(StripAnsiTest, RemovesEscapeSequencesAndLostEscColourCodes) {
  std::string buf;
  EXPECT_EQ(
      StripAnsi("\x1b[36mstep: 1990  \x1b[32mloss:  3.4370\x1b[39m", &buf),
      "step: 1990  loss:  3.4370");
  EXPECT_EQ(
      StripAnsi("[[32m20251023 12:39:12[0m][[36mrank-63/64[0m][[1mINFO [0m]",
                &buf),
      "[20251023 12:39:12][rank-63/64][INFO ]");
  EXPECT_EQ(StripAnsi("\x1b[1;36mx\x1b[K", &buf), "x");
}

TEST(StripAnsiTest, KeepsBracketsThatAreNotColourCodes) {
  std::string buf;
  EXPECT_EQ(StripAnsi("[rank-1/8] [trainer.py:12] lr=[1e-5, 2e-5] [m]", &buf),
            "[rank-1/8] [trainer.py:12] lr=[1e-5, 2e-5] [m]");
  EXPECT_EQ(StripAnsi("plain text", &buf), "plain text");
}

TEST(ParseTimestampTest, ParsesCommonLogTimeShapes) {
  size_t used = 0;
  // 2025-01-02T03:04:05Z = 1735787045
  EXPECT_DOUBLE_EQ(*ParseTimestamp("2025-01-02T03:04:05Z", &used),
                   1735787045.0);
  EXPECT_EQ(used, 20u);
  EXPECT_NEAR(*ParseTimestamp("2025-01-02T03:04:05.123456789Z", &used),
              1735787045.123457, 1e-5);
  EXPECT_DOUBLE_EQ(*ParseTimestamp("2025-01-02T05:04:05+02:00", &used),
                   1735787045.0);
  EXPECT_DOUBLE_EQ(*ParseTimestamp("2025-01-02 03:04:05,500", &used),
                   1735787045.5);
  EXPECT_DOUBLE_EQ(*ParseTimestamp("20250102 03:04:05", &used), 1735787045.0);
  EXPECT_FALSE(ParseTimestamp("2025-13-02 03:04:05", &used));
  EXPECT_FALSE(ParseTimestamp("20251", &used));
}

TEST(ParseCriLineTest, SplitsTimestampStreamTagAndMessage) {
  CriLine cri;
  ASSERT_TRUE(ParseCriLine(
      "2025-01-02T03:04:05.000000001Z stdout F  iteration 1/ 2 |", &cri));
  EXPECT_FALSE(cri.partial);
  EXPECT_FALSE(cri.is_stderr);
  EXPECT_EQ(cri.message, " iteration 1/ 2 |");
  ASSERT_TRUE(
      ParseCriLine("2025-01-02T03:04:05.000000001Z stderr P part", &cri));
  EXPECT_TRUE(cri.partial);
  EXPECT_TRUE(cri.is_stderr);
  EXPECT_FALSE(ParseCriLine("2025-01-02 03:04:05 stdout F x", &cri));
  EXPECT_FALSE(ParseCriLine("iteration 1/ 2 | lm loss: 1 |", &cri));
}

TEST(ParseJsonRecordTest, DecodesLogOrMessageFieldAndTime) {
  std::string msg;
  std::optional<double> ts;
  ASSERT_TRUE(ParseJsonRecord(
      R"({"date":1735787045.25,"log":"\u001b[32mstep: 1 \"q\"\n","stream":"stdout"})",
      &msg, &ts));
  EXPECT_EQ(msg, "\x1b[32mstep: 1 \"q\"");
  EXPECT_DOUBLE_EQ(*ts, 1735787045.25);
  ts.reset();
  ASSERT_TRUE(ParseJsonRecord(
      R"({"time":"2025-01-02T03:04:05Z","message":"hello"})", &msg, &ts));
  EXPECT_EQ(msg, "hello");
  EXPECT_DOUBLE_EQ(*ts, 1735787045.0);
  EXPECT_FALSE(ParseJsonRecord(R"({"other":"x"})", &msg, &ts));
  EXPECT_FALSE(ParseJsonRecord(R"({"log": broken)", &msg, &ts));
  EXPECT_FALSE(ParseJsonRecord("{'loss': 1.0}", &msg, &ts));
}

TEST(ParsePrefixTest, FindsTimestampAndRank) {
  LinePrefix p;
  ParsePrefix(
      "[20251023 12:39:12][rank-63/64][INFO ] [--------trainer.py:2382] :  "
      "iteration",
      &p);
  ASSERT_TRUE(p.timestamp_s);
  EXPECT_TRUE(p.primus);
  EXPECT_EQ(*p.rank, 63);
  EXPECT_EQ(*p.world_size, 64);
  LinePrefix q;
  ParsePrefix("3: 2025-03-04 00:44:44,441 - root - INFO - step: 1990", &q);
  EXPECT_EQ(*q.rank, 3);
  EXPECT_NEAR(*q.timestamp_s, 1741049084.441, 1e-6);
  LinePrefix r;
  ParsePrefix(
      "[2023-04-18 01:46:59,142] [INFO] [logging.py:96:log_dist] [Rank 0] "
      "step=10",
      &r);
  EXPECT_EQ(*r.rank, 0);
  LinePrefix none;
  ParsePrefix(" iteration       10/    1000 | consumed samples: 40 |", &none);
  EXPECT_FALSE(none.timestamp_s);
  EXPECT_FALSE(none.rank);
}

}  // namespace
}  // namespace lens::training
