#include "tracefs.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lens::test {
namespace {
bool HasEvents() {
  struct stat st;
  return ::stat("/sys/kernel/tracing/events/sock", &st) == 0;
}
}  // namespace

std::string EnsureTracefs() {
  if (::geteuid() != 0) return "eBPF tests need root (CAP_BPF, CAP_PERFMON)";
  if (HasEvents()) return "";
  if (::unshare(CLONE_NEWNS) != 0) {
    return std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
  }
  if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return std::string("make / private: ") + std::strerror(errno);
  }
  if (::mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0) {
    return std::string("mount tracefs on /sys/kernel/tracing: ") +
           std::strerror(errno);
  }
  if (!HasEvents()) return "tracefs mounted but has no sock events";
  return "";
}

}  // namespace lens::test
