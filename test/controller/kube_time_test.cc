// ParseKubeTime on the forms the API server writes (metav1.Time,
// metav1.MicroTime) and the RFC 3339 variants other writers use.
#include "controller/kube_time.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace lens::controller {
namespace {

using namespace std::chrono;

Timestamp At(int y, unsigned mo, unsigned d, int h, int mi, int s,
             int64_t us = 0) {
  return Timestamp(sys_days(year(y) / month(mo) / day(d)) + hours(h) +
                   minutes(mi) + seconds(s) + microseconds(us));
}

TEST(KubeTimeTest, ParsesUtcSeconds) {
  auto t = ParseKubeTime("2026-11-20T08:15:02Z");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, At(2026, 11, 20, 8, 15, 2));
  EXPECT_EQ(*ParseKubeTime("1970-01-01T00:00:00Z"), Timestamp{});
}

TEST(KubeTimeTest, ParsesFractionsTruncatedToMicroseconds) {
  EXPECT_EQ(*ParseKubeTime("2026-11-20T08:15:02.123456Z"),
            At(2026, 11, 20, 8, 15, 2, 123456));
  EXPECT_EQ(*ParseKubeTime("2026-11-20T08:15:02.5Z"),
            At(2026, 11, 20, 8, 15, 2, 500000));
  EXPECT_EQ(*ParseKubeTime("2026-11-20T08:15:02.123456789Z"),
            At(2026, 11, 20, 8, 15, 2, 123456));
  EXPECT_EQ(*ParseKubeTime("2026-11-20T08:15:02.999999999Z"),
            At(2026, 11, 20, 8, 15, 2, 999999));
}

TEST(KubeTimeTest, AppliesOffsets) {
  EXPECT_EQ(*ParseKubeTime("2026-11-20T10:15:02+02:00"),
            At(2026, 11, 20, 8, 15, 2));
  EXPECT_EQ(*ParseKubeTime("2026-11-20T02:45:02.25-05:30"),
            At(2026, 11, 20, 8, 15, 2, 250000));
  // Across midnight and a year boundary.
  EXPECT_EQ(*ParseKubeTime("2027-01-01T01:00:00+02:00"),
            At(2026, 12, 31, 23, 0, 0));
  EXPECT_EQ(*ParseKubeTime("2026-11-20T08:15:02-00:00"),
            At(2026, 11, 20, 8, 15, 2));
}

TEST(KubeTimeTest, AcceptsLowercaseSeparators) {
  EXPECT_EQ(*ParseKubeTime("2026-11-20t08:15:02z"), At(2026, 11, 20, 8, 15, 2));
}

TEST(KubeTimeTest, RefusesYearsTheSystemClockCannotHold) {
  EXPECT_TRUE(ParseKubeTime("2261-12-31T23:59:59Z").ok());
  EXPECT_TRUE(ParseKubeTime("1678-01-01T00:00:00Z").ok());
  for (const char* text : {"4052-11-20T08:10:36Z", "9999-12-31T23:59:59Z",
                           "0001-01-01T00:00:00Z", "2262-05-01T00:00:00Z"}) {
    auto t = ParseKubeTime(text);
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(t.status().message().find(text), std::string::npos) << t.status();
  }
}

TEST(KubeTimeTest, KnowsLeapYears) {
  EXPECT_EQ(*ParseKubeTime("2024-02-29T00:00:00Z"), At(2024, 2, 29, 0, 0, 0));
  EXPECT_EQ(*ParseKubeTime("2000-02-29T00:00:00Z"), At(2000, 2, 29, 0, 0, 0));
  EXPECT_FALSE(ParseKubeTime("2026-02-29T00:00:00Z").ok());
  EXPECT_FALSE(ParseKubeTime("1900-02-29T00:00:00Z").ok());
}

TEST(KubeTimeTest, RefusesMalformedTextNamingIt) {
  for (const char* bad : {
           "",
           "yesterday",
           "2026-11-20",
           "2026-11-20T08:15:02",       // no zone
           "2026-11-20 08:15:02Z",      // space (Go refuses it too)
           "2026-11-20T08:15Z",         // no seconds
           "2026-11-20T08:15:02.Z",     // empty fraction
           "2026-11-20T08:15:02Zjunk",  // trailing text
           "2026-11-20T08:15:02+0200",  // offset without ':'
           "2026-11-20T08:15:02+02",    //
           "2026-11-20T08:15:02+24:00",
           "2026-11-20T08:15:02+02:60",
           "2026-13-01T00:00:00Z",
           "2026-00-01T00:00:00Z",
           "2026-11-31T00:00:00Z",
           "2026-11-00T00:00:00Z",
           "2026-11-20T24:00:00Z",
           "2026-11-20T08:60:00Z",
           "2026-11-20T08:15:60Z",  // leap second: Go refuses it
           "26-11-20T08:15:02Z",
           "+2026-11-20T08:15:02Z",
           "2026-1-20T08:15:02Z",
       }) {
    auto t = ParseKubeTime(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find("\"" + std::string(bad) + "\""),
              std::string::npos)
        << t.status();
  }
}

}  // namespace
}  // namespace lens::controller
