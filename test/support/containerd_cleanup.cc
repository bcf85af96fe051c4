#include "containerd_cleanup.h"

#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>
#include <vector>

#include "command.h"

namespace lens::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// SIGKILLs every process whose command line contains `needle` and waits (up
// to 5 s) until they are gone. Zombies (empty cmdline) count as gone: the
// init of some VMs never reaps reparented shims.
void KillProcessesMentioning(const std::string& needle) {
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  for (bool found = true; found && Clock::now() < deadline;) {
    found = false;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
      const pid_t pid = std::atoi(e.path().filename().c_str());
      std::string cmdline = ReadFile(e.path().string() + "/cmdline");
      std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
      if (pid <= 0 || pid == ::getpid() ||
          cmdline.find(needle) == std::string::npos) {
        continue;
      }
      ::kill(pid, SIGKILL);
      found = true;
    }
    if (found) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Removes /sys/fs/cgroup[/<controller>]/<name> and everything below, deepest
// first; cgroups that still hold processes stay.
void RemoveCgroupTree(const std::string& name) {
  std::error_code ec;
  std::vector<fs::path> hierarchies = {"/sys/fs/cgroup"};  // cgroup v2
  for (const auto& e : fs::directory_iterator("/sys/fs/cgroup", ec)) {
    if (!e.is_symlink(ec)) hierarchies.push_back(e.path());  // v1
  }
  for (const fs::path& hierarchy : hierarchies) {
    if (!fs::is_directory(hierarchy / name, ec)) continue;
    std::vector<std::string> dirs = {(hierarchy / name).string()};
    for (const auto& e : fs::recursive_directory_iterator(dirs[0], ec)) {
      if (e.is_directory(ec)) dirs.push_back(e.path().string());
    }
    std::sort(dirs.begin(), dirs.end(),
              [](const auto& a, const auto& b) { return a.size() > b.size(); });
    for (const std::string& d : dirs) ::rmdir(d.c_str());
  }
}

}  // namespace

void CleanupLeftovers(const std::string& dir, const std::string& runc) {
  KillProcessesMentioning(dir + "/");
  std::error_code ec;
  for (const auto& ns : fs::directory_iterator(dir + "/run/runc", ec)) {
    for (const auto& c : fs::directory_iterator(ns.path(), ec)) {
      static_cast<void>(
          RunCommand({runc, "--root", ns.path().string(), "delete", "--force",
                      c.path().filename().string()}));
    }
  }
  std::vector<std::string> mounts;
  for (const std::string& line : Lines(ReadFile("/proc/self/mountinfo"))) {
    std::stringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    if (point.rfind(dir + "/", 0) == 0) mounts.push_back(point);
  }
  std::sort(mounts.rbegin(), mounts.rend());  // children first
  for (const std::string& m : mounts) ::umount2(m.c_str(), MNT_DETACH);
  RemoveCgroupTree(fs::path(dir).filename().string());
}

void SweepStale(const std::string& base, const std::string& runc) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(base, ec)) {
    const std::string dir = e.path().string();
    if (e.path().filename().string().rfind("lens-ctrd-", 0) != 0) continue;
    const pid_t owner = std::atoi(ReadFile(dir + "/owner").c_str());
    if (owner <= 0 || ::kill(owner, 0) == 0 || errno != ESRCH) continue;
    CleanupLeftovers(dir, runc);
    fs::remove_all(dir, ec);
  }
}

}  // namespace lens::test
