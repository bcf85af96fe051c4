#include <gtest/gtest.h>

#include <string>

#include "lens/flow_policy.h"

namespace lens {
namespace {

const std::string kProc = std::string(LENS_FIXTURES_DIR) + "/flow/proc";

IpAddress Ip(const char* text) { return *IpAddress::Parse(text); }

TEST(ListeningSocketsTest, ReadsListenersFromProcNetTcpAndTcp6) {
  auto s = ListeningSockets::Read(kProc);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->size(), 4u);  // two IPv4 and two IPv6 LISTEN rows
  // 0.0.0.0:2024 listens on every IPv4 address.
  EXPECT_TRUE(s->IsListening(Ip("10.0.0.5"), 2024));
  EXPECT_TRUE(s->IsListening(Ip("127.0.0.1"), 2024));
  // 127.0.0.1:8990 only there.
  EXPECT_TRUE(s->IsListening(Ip("127.0.0.1"), 8990));
  EXPECT_FALSE(s->IsListening(Ip("10.0.0.5"), 8990));
  // [::]:8080 takes IPv6 and IPv4 (mapped) connections.
  EXPECT_TRUE(s->IsListening(Ip("fd00::5"), 8080));
  EXPECT_TRUE(s->IsListening(Ip("10.0.0.5"), 8080));
  EXPECT_TRUE(s->IsListening(Ip("::ffff:10.0.0.5"), 8080));
  // [::1]:9090
  EXPECT_TRUE(s->IsListening(Ip("::1"), 9090));
  EXPECT_FALSE(s->IsListening(Ip("fd00::5"), 9090));
  // Established rows are not listeners.
  EXPECT_FALSE(s->IsListening(Ip("10.0.0.5"), 45678));
  EXPECT_FALSE(s->IsListening(Ip("fd00::5"), 40000));
}

TEST(ListeningSocketsTest, DirectionFromTheLocalEnd) {
  auto s = ListeningSockets::Read(kProc);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->DirectionOf(Ip("10.0.0.5"), 2024), FlowDirection::kIngress);
  EXPECT_EQ(s->DirectionOf(Ip("10.0.0.5"), 45678), FlowDirection::kEgress);
}

TEST(ListeningSocketsTest, MissingTcp6IsFineMissingTcpIsNot) {
  auto only_v4 = ListeningSockets::Parse(
      "  sl  local_address rem_address   st\n"
      "   0: 0100007F:0050 00000000:0000 0A 0\n",
      "");
  ASSERT_TRUE(only_v4.ok());
  EXPECT_TRUE(only_v4->IsListening(Ip("127.0.0.1"), 80));
  EXPECT_EQ(ListeningSockets::Read(kProc + "/nowhere").status().code(),
            StatusCode::kNotFound);
}

TEST(ListeningSocketsTest, MalformedLinesNameFileAndLine) {
  auto s = ListeningSockets::Parse(
      "  sl  local_address rem_address   st\n"
      "   0: 0100007F:0050 00000000:0000 0A 0\n"
      "   1: zz00007F:0050 00000000:0000 0A 0\n",
      "");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("net/tcp:3:"), std::string::npos)
      << s.status();
}

}  // namespace
}  // namespace lens
