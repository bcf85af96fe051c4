// The main of every GoogleTest program of Lens. Run as root (as CI runs),
// a test process first moves into a network namespace of its own with only
// loopback up: the servers it starts (daemons, PostgreSQL, VictoriaMetrics,
// Prometheus, the pages Chromium opens) and its clients share it, so no test
// running beside it (ctest -j) can take a port it is about to use, and
// nothing else on the machine (a `make run` on 8080) is in its way. Without
// root, or with LENS_TEST_HOST_NETWORK=1, it keeps the host's namespace and
// its servers bind port 0 as always.
//
// Each test process also gets a temporary directory of its own
// (TEST_TMPDIR and TMPDIR, so ::testing::TempDir() and its children use
// it): two tests running beside each other never write the same file, and
// the directory is removed when the process ends.
#include <ftw.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

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

// Inside the temporary directory the caller had (TMPDIR or /tmp).
std::string MakeOwnTempDir() {
  const char* parent = std::getenv("TMPDIR");
  std::string pattern = (parent != nullptr && parent[0] != '\0')
                            ? std::string(parent)
                            : std::string("/tmp");
  if (pattern.back() != '/') pattern += '/';
  pattern += "lens-test.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "lens test: cannot create %s: %s\n", pattern.c_str(),
                 std::strerror(errno));
    std::exit(1);
  }
  // As /tmp is: a test's child that drops privileges still reaches it.
  ::chmod(pattern.c_str(), 01777);
  // Harnesses that sweep what a crashed run left behind look in the parent.
  ::setenv("LENS_TEST_SHARED_TMPDIR",
           pattern.substr(0, pattern.rfind('/')).c_str(), 0);
  ::setenv("TMPDIR", pattern.c_str(), 1);
  pattern += '/';
  ::setenv("TEST_TMPDIR", pattern.c_str(), 1);
  return pattern;
}

void RemoveTree(const std::string& dir) {
  ::nftw(
      dir.c_str(),
      [](const char* path, const struct stat*, int, FTW*) {
        ::remove(path);
        return 0;
      },
      16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

}  // namespace

int main(int argc, char** argv) {
  EnterOwnNetworkNamespace();
  const std::string temp_dir = MakeOwnTempDir();
  ::testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  RemoveTree(temp_dir);
  return result;
}
