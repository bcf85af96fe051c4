// A real, private containerd (+ runc shims) for tests: its own root, state,
// gRPC socket and cgroup parent in a fresh temporary directory, driven with
// the `ctr` CLI (the real containerd client). Nothing is downloaded: the
// busybox image is built from the host's static /bin/busybox.
//
// Needs root, the containerd, ctr, containerd-shim-runc-v2, runc, tar and
// sha256sum binaries and /bin/busybox (Debian: apt install containerd runc
// busybox-static); otherwise Start() returns kFailedPrecondition with the
// reason, for GTEST_SKIP().
//
// Isolation from other containerd instances on the host (other tests running
// in parallel included): containerd runs in a private mount namespace where
// /run/containerd (runc state, shim sockets) is bound to <dir>/run, so the
// container rootfs mounts never appear in the host's mount table and vanish
// with the namespace. Containers started by RunDetached() live in the cgroup
// <cgroup_parent()>/<namespace>/<id>; create-only containers get ctr's
// default /<namespace>/<id> (ctr 1.6 `containers create` has no --cgroup),
// so tests should use container ids no other test uses.
#ifndef LENS_TEST_SUPPORT_CONTAINERD_HARNESS_H_
#define LENS_TEST_SUPPORT_CONTAINERD_HARNESS_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lens/status.h"

namespace lens::test {

// The namespace the kubelet's CRI plugin uses.
inline constexpr char kCriNamespace[] = "k8s.io";

// What RunDetached() creates. Paths are host paths.
struct ContainerSpec {
  std::string id;
  std::string ns = kCriNamespace;  // containerd namespace
  std::string image;               // a ref imported with ImportBusyboxImage()
  std::vector<std::string> args = {"sleep", "3600"};
  // Container labels, e.g. the CRI ones (io.kubernetes.pod.name, ...).
  std::map<std::string, std::string> labels;
  // Device nodes (`ctr --device`): each appears in the container at the same
  // path and in the spec's linux.devices with its type, major and minor.
  std::vector<std::string> devices;
  // `ctr --privileged`: all host devices, linux.resources.devices allows all.
  bool privileged = false;
  int64_t memory_limit_bytes = 0;  // 0: no limit
  // true: `ctr containers create` only (start it with StartTask()).
  bool create_only = false;
};

// Call all methods from one thread (the test's); containerd itself serves
// any number of other clients (the code under test) concurrently.
class ContainerdServer {
 public:
  struct Options {
    // Empty: overlayfs when containerd reports it usable, else native.
    std::string snapshotter;
  };

  // Sweeps what crashed earlier harnesses left behind, creates the directory
  // and config, and starts containerd; blocks until it answers (up to 30 s).
  // Errors name the step that failed and include the tail of the log;
  // kFailedPrecondition when not root or a binary is missing. containerd is
  // sent SIGTERM when the thread that started it (here or in StartAgain())
  // exits, so a crashed test leaves no containerd behind; the next Start()
  // removes the shims and containers such a test left.
  static StatusOr<std::unique_ptr<ContainerdServer>> Start(Options options);
  static StatusOr<std::unique_ptr<ContainerdServer>> Start();  // Options{}

  // Stop().
  ~ContainerdServer();
  ContainerdServer(const ContainerdServer&) = delete;
  ContainerdServer& operator=(const ContainerdServer&) = delete;

  // The gRPC address (a unix socket path; the same after StartAgain()).
  const std::string& socket_path() const { return socket_; }
  // The temporary directory holding everything (removed by Stop()).
  const std::string& dir() const { return dir_; }
  const std::string& snapshotter() const { return snapshotter_; }
  // "/lens-ctrd-XXXXXX": cgroup parent of RunDetached() containers.
  const std::string& cgroup_parent() const { return cgroup_parent_; }
  std::string log_path() const { return dir_ + "/containerd.log"; }
  // containerd's pid, -1 when it is not running.
  pid_t pid() const { return pid_; }

  // Builds (once per ref) an OCI image archive from /bin/busybox with the
  // applets sh, sleep, true, cat, head, tail, dd, echo, ls, nc and imports it into
  // `ns` as `ref`, unpacked for snapshotter(). kInvalidArgument for a ref
  // with characters outside [A-Za-z0-9._:/@-].
  Status ImportBusyboxImage(const std::string& ns, const std::string& ref);

  // `ctr run -d` (or `ctr containers create`) as described by `spec`.
  Status RunDetached(const ContainerSpec& spec);
  // Starts the task of a create-only container, detached, I/O to /dev/null.
  Status StartTask(const std::string& id,
                   const std::string& ns = kCriNamespace);
  // Sends `signal` to the task's init process.
  Status KillTask(const std::string& id, int signal,
                  const std::string& ns = kCriNamespace);
  // Deletes a task, waiting up to 10 s for it to stop first.
  Status DeleteTask(const std::string& id,
                    const std::string& ns = kCriNamespace);
  // Deletes a container (without a task) and its snapshot.
  Status DeleteContainer(const std::string& id,
                         const std::string& ns = kCriNamespace);
  // Runs `args` in the running container; returns its stdout, or an error
  // with its stderr when it exits non-zero.
  StatusOr<std::string> Exec(const std::string& id,
                             const std::vector<std::string>& args,
                             const std::string& ns = kCriNamespace);
  // `ctr --address <socket> <args...>`: stdout, or an error with stderr:
  // kNotFound or kAlreadyExists when containerd said so, else kInternal.
  // The methods above return these errors too.
  StatusOr<std::string> Ctr(const std::vector<std::string>& args) const;

  // Sends `signal` to containerd and waits for it to exit (SIGKILL after
  // 10 s). Shims and containers keep running, as in production.
  Status Kill(int signal);
  // Starts containerd again on the same root, state, socket and mount
  // namespace, so it reconnects to the running shims. A no-op while running;
  // kFailedPrecondition after Stop().
  Status StartAgain();
  // Deletes every task, stops containerd, kills leftover shims and container
  // processes, removes their cgroups and the directory. Idempotent.
  Status Stop();

 private:
  ContainerdServer() = default;
  Status Init(const Options& options);
  Status Launch();
  Status WaitReady();

  std::string dir_;
  std::string socket_;
  std::string snapshotter_;
  std::string cgroup_parent_;
  std::string containerd_bin_, ctr_bin_, runc_bin_;
  std::vector<std::string> env_;  // containerd's environment
  std::map<std::string, std::string> image_archives_;  // ref -> archive path
  int mount_ns_fd_ = -1;  // containerd's mount namespace, kept for restarts
  int exec_seq_ = 0;
  pid_t pid_ = -1;
};

// Creates a character device node `path` (and its parent directories) with
// mode 0666; OK if it already exists with this major and minor. Needs root.
Status MakeCharDevice(const std::string& path, unsigned major, unsigned minor);

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_CONTAINERD_HARNESS_H_
