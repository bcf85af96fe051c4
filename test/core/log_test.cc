#include "lens/log.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lens {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;
using std::chrono::system_clock;

// 2024-05-01T12:34:56.012345Z
const system_clock::time_point kFixedTime =
    system_clock::time_point(seconds(1714566896) + microseconds(12345));

// Captures lines from the process-wide logger; restores the default on
// destruction.
class LogCapture {
 public:
  explicit LogCapture(LogLevel level, LogFormat format = LogFormat::kText) {
    LogOptions options;
    options.level = level;
    options.format = format;
    options.sink = [this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    };
    options.clock = [] { return kFixedTime; };
    ConfigureLogging(std::move(options));
  }
  ~LogCapture() { ConfigureLogging(LogOptions{}); }

  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

TEST(LogLevelTest, ParsesNamesCaseInsensitively) {
  EXPECT_EQ(*ParseLogLevel("debug"), LogLevel::kDebug);
  EXPECT_EQ(*ParseLogLevel("INFO"), LogLevel::kInfo);
  EXPECT_EQ(*ParseLogLevel("Warning"), LogLevel::kWarn);
  EXPECT_EQ(*ParseLogLevel("warn"), LogLevel::kWarn);
  EXPECT_EQ(*ParseLogLevel("error"), LogLevel::kError);
  EXPECT_EQ(*ParseLogFormat("JSON"), LogFormat::kJson);
  EXPECT_EQ(*ParseLogFormat("text"), LogFormat::kText);
  EXPECT_EQ(LogLevelName(LogLevel::kWarn), "warn");
  EXPECT_EQ(LogFormatName(LogFormat::kJson), "json");
}

TEST(LogLevelTest, RejectsUnknownNamesWithTheAcceptedOnes) {
  auto level = ParseLogLevel("verbose");
  ASSERT_FALSE(level.ok());
  EXPECT_EQ(level.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      level.status().message(),
      "unknown log level \"verbose\" (want one of: debug, info, warn, error)");
  auto format = ParseLogFormat("logfmt");
  ASSERT_FALSE(format.ok());
  EXPECT_EQ(format.status().message(),
            "unknown log format \"logfmt\" (want one of: text, json)");
  EXPECT_FALSE(ParseLogLevel("").ok());
}

TEST(LogTimestampTest, IsRfc3339UtcWithMicroseconds) {
  EXPECT_EQ(FormatLogTimestamp(kFixedTime), "2024-05-01T12:34:56.012345Z");
  EXPECT_EQ(FormatLogTimestamp(system_clock::time_point()),
            "1970-01-01T00:00:00.000000Z");
  // Before the epoch the fraction is still positive.
  EXPECT_EQ(FormatLogTimestamp(system_clock::time_point(-microseconds(1))),
            "1969-12-31T23:59:59.999999Z");
}

TEST(LogTest, TextLineHasTimestampLevelMessageAndFields) {
  LogCapture capture(LogLevel::kInfo);
  LENS_LOG(INFO).Field("node", "n1").Field("gpus", 8).Field("ok", true)
      << "probe done in " << 3 << "ms";
  ASSERT_EQ(capture.lines().size(), 1u);
  EXPECT_EQ(capture.lines()[0],
            "2024-05-01T12:34:56.012345Z INFO probe done in 3ms node=n1 gpus=8 "
            "ok=true");
}

TEST(LogTest, TextQuotesValuesThatNeedItAndKeepsOneLine) {
  LogCapture capture(LogLevel::kDebug);
  LENS_LOG(WARN)
          .Field("path", "/a b")
          .Field("empty", "")
          .Field("q", "say \"hi\"")
      << "line1\nline2";
  ASSERT_EQ(capture.lines().size(), 1u);
  EXPECT_EQ(
      capture.lines()[0],
      "2024-05-01T12:34:56.012345Z WARN line1\\nline2 path=\"/a b\" empty=\"\" "
      "q=\"say \\\"hi\\\"\"");
}

TEST(LogTest, JsonLineEscapesAndTypesFields) {
  LogCapture capture(LogLevel::kDebug, LogFormat::kJson);
  LENS_LOG(ERROR)
          .Field("device", "card\"0\"\\")
          .Field("count", -3)
          .Field("ratio", 0.25)
          .Field("bad", std::nan(""))
          .Field("open", false)
          .Field("ctl", std::string("a\x01") + "\t")
          .Field("msg", "shadow")
          .Field("err", NotFoundError("no such file"))
      << "read failed\n";
  ASSERT_EQ(capture.lines().size(), 1u);
  EXPECT_EQ(capture.lines()[0],
            "{\"ts\":\"2024-05-01T12:34:56.012345Z\",\"level\":\"error\","
            "\"msg\":\"read "
            "failed\\n\",\"device\":\"card\\\"0\\\"\\\\\",\"count\":-3,"
            "\"ratio\":0.25,"
            "\"bad\":\"NaN\",\"open\":false,\"ctl\":\"a\\u0001\\t\",\"_msg\":"
            "\"shadow\","
            "\"err\":\"NOT_FOUND: no such file\"}");
}

int evaluations = 0;
int CountEvaluation() { return ++evaluations; }

TEST(LogTest, DisabledLevelsEmitNothingAndEvaluateNothing) {
  LogCapture capture(LogLevel::kWarn);
  evaluations = 0;
  LENS_LOG(DEBUG) << CountEvaluation();
  LENS_LOG(INFO).Field("n", CountEvaluation()) << "x";
  EXPECT_EQ(evaluations, 0);
  EXPECT_TRUE(capture.lines().empty());
  EXPECT_FALSE(LogEnabled(LogLevel::kInfo));
  EXPECT_TRUE(LogEnabled(LogLevel::kWarn));
  LENS_LOG(ERROR) << CountEvaluation();
  EXPECT_EQ(evaluations, 1);
  EXPECT_EQ(capture.lines().size(), 1u);
}

TEST(LogTest, MacroNestsInIfElseWithoutDanglingElse) {
  LogCapture capture(LogLevel::kInfo);
  bool took_else = false;
  if (false)
    LENS_LOG(INFO) << "not this";
  else
    took_else = true;
  EXPECT_TRUE(took_else);
  EXPECT_TRUE(capture.lines().empty());
}

TEST(LogTest, ConcurrentMessagesAreWholeLines) {
  LogCapture capture(LogLevel::kInfo);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kPerThread; ++i)
        LENS_LOG(INFO).Field("t", t).Field("i", i) << "m";
    });
  }
  for (auto& th : threads) th.join();
  const auto lines = capture.lines();
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kPerThread));
  std::vector<int> next(kThreads, 0);
  for (const std::string& line : lines) {
    int t = -1, i = -1;
    ASSERT_EQ(
        std::sscanf(line.c_str(),
                    "2024-05-01T12:34:56.012345Z INFO m t=%d i=%d", &t, &i),
        2)
        << line;
    ASSERT_GE(t, 0);
    ASSERT_LT(t, kThreads);
    EXPECT_EQ(i, next[t]++) << "messages of one thread arrive in order";
  }
}

TEST(LogTest, DefaultSinkWritesToStderr) {
  ConfigureLogging(LogOptions{});
  testing::internal::CaptureStderr();
  LENS_LOG(INFO).Field("k", 1) << "to stderr";
  LENS_LOG(DEBUG) << "hidden";
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(" INFO to stderr k=1\n"), std::string::npos) << err;
  EXPECT_EQ(err.find("hidden"), std::string::npos);
}

}  // namespace
}  // namespace lens
