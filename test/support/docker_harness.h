// A real, private Docker Engine (dockerd from Debian's docker.io, with the
// containerd it starts and manages itself) for tests: its own data root,
// exec root, pidfile, API socket and cgroup parent in a fresh temporary
// directory, no bridge, no iptables, no TCP listener. Driven with Debian's
// `docker` CLI (the real client). Nothing is downloaded: the busybox image
// is imported from a root file system tar built from the host's static
// /bin/busybox.
//
// Needs root, dockerd, docker, containerd, containerd-shim-runc-v2, runc,
// tar and /bin/busybox (Debian: apt install docker.io busybox-static);
// otherwise Start() returns kFailedPrecondition with the reason, for
// GTEST_SKIP().
//
// dockerd runs in a private mount namespace (its overlay and network
// namespace mounts never appear in the host's mount table) and gets SIGTERM
// when the thread that started it exits; the next Start() removes what a
// crashed test left (its processes, containers and directory).
#ifndef LENS_TEST_SUPPORT_DOCKER_HARNESS_H_
#define LENS_TEST_SUPPORT_DOCKER_HARNESS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lens/status.h"

namespace lens::test {

// What CreateContainer() creates (`docker create`). Paths are host paths.
struct DockerContainerSpec {
  std::string name;   // unique per test
  std::string image;  // a ref imported with ImportBusyboxImage()
  std::vector<std::string> args = {"sleep", "3600"};
  std::map<std::string, std::string> labels;
  // --device <host path>[:<path in container>]
  std::vector<std::string> devices;
  // --env NAME=value (must never reach a Lens record)
  std::vector<std::string> env;
  bool privileged = false;
};

// Call all methods from one thread (the test's); dockerd itself serves any
// number of other clients (the code under test) concurrently.
class DockerServer {
 public:
  // Sweeps what crashed harnesses left, creates the directory and starts
  // dockerd; blocks until it answers (up to 30 s). Errors name the step and
  // include the log's tail.
  static StatusOr<std::unique_ptr<DockerServer>> Start();
  ~DockerServer();  // Stop()
  DockerServer(const DockerServer&) = delete;
  DockerServer& operator=(const DockerServer&) = delete;

  // The API socket (the same after StartAgain()).
  const std::string& socket_path() const { return socket_; }
  const std::string& dir() const { return dir_; }
  std::string log_path() const { return dir_ + "/dockerd.log"; }
  pid_t pid() const { return pid_; }

  // `docker import` of a root file system with /bin/busybox and the applets
  // sh, sleep, true, cat and echo, as `ref`.
  Status ImportBusyboxImage(const std::string& ref);
  // `docker create`; returns the full container id.
  StatusOr<std::string> CreateContainer(const DockerContainerSpec& spec);
  // `docker <args...>` against this daemon: stdout, or an error carrying
  // stderr (kNotFound when Docker said "No such container").
  StatusOr<std::string> Docker(const std::vector<std::string>& args) const;

  // Sends `signal` to dockerd and waits for it to exit (SIGKILL after 20 s).
  // After SIGKILL its containerd and containers keep running.
  Status Kill(int signal);
  // Starts dockerd again on the same directories and socket (a no-op while
  // it runs).
  Status StartAgain();
  // Removes every container, stops dockerd and its containerd, kills what
  // is left and removes the directory. Idempotent.
  Status Stop();

 private:
  DockerServer() = default;
  Status Init();
  Status Launch();

  std::string dir_, socket_, cgroup_parent_;
  std::string dockerd_bin_, docker_bin_, runc_bin_;
  std::vector<std::string> env_;
  int mount_ns_fd_ = -1;
  pid_t pid_ = -1;
};

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_DOCKER_HARNESS_H_
