// The main of every GoogleTest program of Lens. Run as root (as CI runs),
// a test process first moves into a network namespace of its own with only
// loopback up: the servers it starts (daemons, PostgreSQL, VictoriaMetrics,
// Prometheus, the pages Chromium opens) and its clients share it, so no test
// running beside it (ctest -j) can take a port it is about to use, and
// nothing else on the machine (a `make run` on 8080) is in its way. Without
// root, or with LENS_TEST_HOST_NETWORK=1, it keeps the host's namespace and
// its servers bind port 0 as always.
#include <gtest/gtest.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

bool BringLoopbackUp() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  bool ok = ::ioctl(fd, SIOCGIFFLAGS, &ifr) == 0;
  if (ok) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    ok = ::ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
  }
  ::close(fd);
  return ok;
}

// Before any thread exists: unshare() moves only the calling thread.
void EnterOwnNetworkNamespace() {
  if (::geteuid() != 0) return;
  if (const char* host = std::getenv("LENS_TEST_HOST_NETWORK");
      host != nullptr && std::strcmp(host, "1") == 0) {
    return;
  }
  if (::unshare(CLONE_NEWNET) != 0) {
    std::fprintf(stderr,
                 "lens test: no network namespace of its own (%s); on the "
                 "host's\n",
                 std::strerror(errno));
    return;
  }
  if (!BringLoopbackUp()) {
    std::fprintf(stderr, "lens test: cannot bring up loopback: %s\n",
                 std::strerror(errno));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  EnterOwnNetworkNamespace();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
