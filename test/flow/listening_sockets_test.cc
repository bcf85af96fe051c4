#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

TEST(ListeningSocketsTest, MappedIpv6ListenerMatchesItsIpv4Address) {
  // [::ffff:10.0.0.5]:80 as the kernel prints it: four host-order words.
  auto s =
      ListeningSockets::Parse("",
                              "  sl  local_address remote_address st\n"
                              "   0: 0000000000000000FFFF00000500000A:0050 "
                              "00000000000000000000000000000000:0000 0A 0\n");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->IsListening(Ip("10.0.0.5"), 80));
  EXPECT_TRUE(s->IsListening(Ip("::ffff:10.0.0.5"), 80));
  EXPECT_FALSE(s->IsListening(Ip("10.0.0.6"), 80));
  EXPECT_EQ(s->DirectionOf(Ip("10.0.0.6"), 80), FlowDirection::kEgress);
}

TEST(ListeningSocketsTest, ReadNamesTheTreeOfAMalformedTable) {
  const std::string root = testing::TempDir() + "/listeners-bad-proc";
  std::filesystem::create_directories(root + "/net");
  std::ofstream(root + "/net/tcp")
      << "  sl  local_address rem_address   st\n   0: 0100007F 0A\n";
  auto s = ListeningSockets::Read(root);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInternal);
  EXPECT_NE(s.status().message().find(root), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find("net/tcp:2:"), std::string::npos)
      << s.status();
}

// Real sockets on this kernel: more listeners than fit in one page of
// /proc/net/tcp (seq_file hands out a page per read), all of them found.
TEST(ListeningSocketsTest, ReadsEveryPageOfTheKernelsTable) {
  constexpr int kSockets = 120;  // ~150 bytes a row: about 4.5 pages
  std::vector<int> fds;
  std::vector<uint16_t> ports;
  for (int i = 0; i < kSockets; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), len), 0);
    ASSERT_EQ(::listen(fd, 1), 0);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len), 0);
    ports.push_back(ntohs(sa.sin_port));
  }
  auto s = ListeningSockets::Read("/proc");
  for (int fd : fds) ::close(fd);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GE(s->size(), static_cast<size_t>(kSockets));
  int found = 0;
  for (uint16_t port : ports) found += s->IsListening(Ip("127.0.0.1"), port);
  EXPECT_EQ(found, kSockets);
}

}  // namespace
}  // namespace lens
