// Where a test harness puts what outlives a crashed test process.
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

namespace lens::test {

// The temporary directory every test process shares (the one ctest was
// started with), not the process's own (test_main.cc sets TMPDIR to that):
// harnesses that sweep what a crashed run left behind (containerd, Docker)
// look there. Short enough for a Unix socket path below it.
inline std::string SharedTempBase() {
  for (const char* name : {"LENS_TEST_SHARED_TMPDIR", "TMPDIR"}) {
    const char* dir = std::getenv(name);
    if (dir != nullptr && *dir != '\0' && std::strlen(dir) < 64) return dir;
  }
  return "/tmp";
}

}  // namespace lens::test
