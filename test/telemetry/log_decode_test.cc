// The fluent-bit request decoder (log_decode.h): dates to the microsecond,
// wrong shapes and malformed bodies answered with what was expected and
// where, limits, and no crash on cut or mutated bodies.
#include "telemetry/log_decode.h"

#include <gtest/gtest.h>

#include <random>

#include "training_rows.h"

namespace lens::telemetry {
namespace {

TEST(LogDecodeTest, KeepsTheDateToTheMicrosecond) {
  EXPECT_EQ(ParseLogDate("1700000000.000003", true), 1700000000000003);
  EXPECT_EQ(ParseLogDate("1741773600.999999", true), 1741773600999999);
  EXPECT_EQ(ParseLogDate("1741773600.9999995", true), 1741773601000000);
  EXPECT_EQ(ParseLogDate("1741773600.5", true), 1741773600500000);
  EXPECT_EQ(ParseLogDate("1741773600", true), 1741773600000000);     // epoch
  EXPECT_EQ(ParseLogDate("1741773600123", true), 1741773600123000);  // _ms
  EXPECT_EQ(ParseLogDate("1.7417736001234567e9", true), 1741773600123457);
  EXPECT_EQ(ParseLogDate("2018-05-30T09:39:52.000681Z", false),
            1527673192000681);  // iso8601
  EXPECT_EQ(ParseLogDate("2018-05-30 09:39:52.000681", false),
            1527673192000681);  // java_sql_timestamp
  EXPECT_EQ(ParseLogDate("-1", true), std::nullopt);
  EXPECT_EQ(ParseLogDate("99999999999999999999.5", true), std::nullopt);
  EXPECT_EQ(ParseLogDate("9999999999999999", true), std::nullopt);
  EXPECT_EQ(ParseLogDate("yesterday", false), std::nullopt);
  std::string text;
  AppendRfc3339Micros(1527673192000681, &text);
  EXPECT_EQ(text, "2018-05-30T09:39:52.000681Z");
}

TEST(LogDecodeTest, WrongShapesAreErrorsThatSayWhatWasExpected) {
  DecodedLogs out;
  const std::string record = Record("p", "hello");
  Status st = DecodeFluentBitLogs(record, LogFormat::kJson, {}, &out);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("json_lines?"), std::string::npos) << st;
  st = DecodeFluentBitLogs("[" + record + "]", LogFormat::kJsonLines, {}, &out);
  EXPECT_NE(st.message().find("format json?"), std::string::npos) << st;
  st = DecodeFluentBitLogs("[" + record + ",1]", LogFormat::kJson, {}, &out);
  EXPECT_NE(st.message().find("record 2 is not a JSON object"),
            std::string::npos)
      << st;
  EXPECT_TRUE(out.records.empty());
  st = DecodeFluentBitLogs("[" + record + "] []", LogFormat::kJson, {}, &out);
  EXPECT_NE(st.message().find("after the array of records at byte " +
                              std::to_string(record.size() + 3)),
            std::string::npos)
      << st;
  // json_stream: objects back to back, no newline.
  ASSERT_TRUE(
      DecodeFluentBitLogs(record + record, LogFormat::kAuto, {}, &out).ok());
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[1].message, "hello");
  EXPECT_EQ(out.records[1].pod_id, "uid-p");
  EXPECT_EQ(out.records[1].host, "node-a");
  EXPECT_EQ(out.records[1].time_us, 1741777201000000);
  ASSERT_TRUE(DecodeFluentBitLogs(" \n", LogFormat::kJson, {}, &out).ok());
  EXPECT_TRUE(out.records.empty());
}

// Every prefix and many one-byte mutations of a real body: an answer each
// time (records or a clear error), never a crash.
TEST(LogDecodeTest, SurvivesCutAndMutatedBodies) {
  const std::string body = ReadFixture("telemetry/fluentbit_shapes.json");
  DecodedLogs out;
  auto check = [&](const std::string& b) {
    for (LogFormat f : {LogFormat::kJson, LogFormat::kJsonLines}) {
      Status st = DecodeFluentBitLogs(b, f, {}, &out);
      EXPECT_TRUE(st.ok() || st.code() == StatusCode::kInvalidArgument) << st;
      if (!st.ok()) {
        EXPECT_TRUE(out.records.empty());
      }
    }
  };
  for (size_t cut = 0; cut < body.size(); cut += 13) check(body.substr(0, cut));
  std::mt19937 rng(3);
  const char kBytes[] = {'"',  '\\', '{',  '}',    '[', ']', ',', ':',
                         '\0', 'P',  '\n', '\xff', '0', '.', 'e', '-'};
  for (int i = 0; i < 3000; ++i) {
    std::string b = body;
    b[rng() % b.size()] = kBytes[rng() % sizeof kBytes];
    check(b);
  }
}

TEST(LogDecodeTest, EnforcesItsLimits) {
  DecodedLogs out;
  LogDecodeLimits limits;
  limits.max_body_bytes = 100;
  const std::string record = Record("p", "hello");
  Status st = DecodeFluentBitLogs(record, LogFormat::kJsonLines, limits, &out);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st;
  limits = {};
  limits.max_records = 2;
  st = DecodeFluentBitLogs(record + record + record, LogFormat::kJsonLines,
                           limits, &out);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st;
  EXPECT_TRUE(out.records.empty());
  limits = {};
  limits.max_message_bytes = 4095;
  std::string long_text;
  for (int i = 0; i < 3000; ++i) long_text += "\xc3\xa9";  // é, 2 bytes
  ASSERT_TRUE(DecodeFluentBitLogs(Record("p", long_text), LogFormat::kJsonLines,
                                  limits, &out)
                  .ok());
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_TRUE(out.records[0].truncated);
  EXPECT_EQ(out.records[0].message.size(), 4094u);  // not inside a character
  EXPECT_EQ(out.truncated, 1u);
  // A million nested arrays: refused at a bounded depth, no recursion.
  const std::string deep = "[{\"a\":" + std::string(1'000'000, '[');
  st = DecodeFluentBitLogs(deep, LogFormat::kJson, {}, &out);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("nested deeper than 32"), std::string::npos)
      << st;
  // Empty objects by the thousand cost nothing: none is kept.
  std::string empties;
  for (int i = 0; i < 100000; ++i) empties += "{}\n";
  ASSERT_TRUE(
      DecodeFluentBitLogs(empties, LogFormat::kJsonLines, {}, &out).ok());
  EXPECT_TRUE(out.records.empty());
  EXPECT_EQ(out.empty, 100000u);
}

}  // namespace
}  // namespace lens::telemetry
