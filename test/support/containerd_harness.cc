#include "containerd_harness.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <regex>
#include <thread>

#include "command.h"
#include "containerd_cleanup.h"
#include "oci_image.h"
#include "temp_base.h"

extern char** environ;

namespace lens::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr auto kReadyTimeout = std::chrono::seconds(30);

// No CRI plugin (it would want CNI), no debug or metrics listener; the opt
// plugin would otherwise write to /opt/containerd.
constexpr char kConfig[] = R"(version = 2
root = "@DIR@/root"
state = "@DIR@/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "@DIR@/ctrd.sock"
[ttrpc]
  address = "@DIR@/ctrd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "@DIR@/opt"
)";

// The last `bytes` of a log file, for error messages.
std::string Tail(const std::string& path, size_t bytes = 2000) {
  std::string text = ReadFile(path);
  if (text.size() > bytes) text = "..." + text.substr(text.size() - bytes);
  return text.empty() ? "(log " + path + " is empty)" : text;
}

// In the forked child: async-signal-safe calls only. Returns the failed step.
const char* EnterMountNamespace(int ns_fd, const char* run_dir) {
  if (ns_fd >= 0) {
    return ::setns(ns_fd, CLONE_NEWNS) == 0 ? nullptr : "setns failed\n";
  }
  if (::unshare(CLONE_NEWNS) != 0) return "unshare(CLONE_NEWNS) failed\n";
  // Slave, so that our mounts do not propagate back to the host.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
    return "making / rslave failed\n";
  }
  if (::mount(run_dir, "/run/containerd", nullptr, MS_BIND, nullptr) != 0) {
    return "bind mount on /run/containerd failed\n";
  }
  return nullptr;
}

}  // namespace

StatusOr<std::unique_ptr<ContainerdServer>> ContainerdServer::Start(
    Options options) {
  std::unique_ptr<ContainerdServer> server(new ContainerdServer());
  if (Status st = server->Init(options); !st.ok()) {
    return st.WithContext("start test containerd");
  }
  return server;
}

StatusOr<std::unique_ptr<ContainerdServer>> ContainerdServer::Start() {
  return Start(Options());
}

ContainerdServer::~ContainerdServer() { static_cast<void>(Stop()); }

Status ContainerdServer::Init(const Options& options) {
  if (::geteuid() != 0) {
    return FailedPreconditionError("containerd and runc need root (euid " +
                                   std::to_string(::geteuid()) + ")");
  }
  for (const char* name : {"containerd", "ctr", "containerd-shim-runc-v2",
                           "runc", "tar", "sha256sum", "/bin/busybox"}) {
    if (name[0] == '/' ? ::access(name, X_OK) != 0 : FindBinary(name).empty()) {
      return FailedPreconditionError(
          std::string(name) + " not found in PATH or " + kStandardPath +
          " (Debian: apt install containerd runc busybox-static)");
    }
  }
  containerd_bin_ = FindBinary("containerd");
  ctr_bin_ = FindBinary("ctr");
  runc_bin_ = FindBinary("runc");
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "PATH=", 5) != 0) env_.push_back(*e);
  }
  env_.push_back(std::string("PATH=") + kStandardPath);  // for shim and runc

  // The socket path must fit in sockaddr_un (107 bytes).
  const std::string base = SharedTempBase();
  SweepStale(base, runc_bin_);
  std::string templ = base + "/lens-ctrd-XXXXXX";
  if (!::mkdtemp(templ.data())) return ErrnoError(errno, "mkdtemp " + templ);
  dir_ = templ;
  socket_ = dir_ + "/ctrd.sock";
  cgroup_parent_ = "/" + fs::path(dir_).filename().string();
  LENS_RETURN_IF_ERROR(WriteFile(dir_ + "/owner", std::to_string(::getpid())));
  LENS_RETURN_IF_ERROR(
      WriteFile(dir_ + "/config.toml", Fill(kConfig, {{"@DIR@", dir_}})));
  std::error_code ec;
  fs::create_directories(dir_ + "/run", ec);
  if (!ec) fs::create_directories("/run/containerd", ec);  // the bind target
  if (ec) return InternalError("create /run/containerd: " + ec.message());
  LENS_RETURN_IF_ERROR(Launch());

  snapshotter_ = options.snapshotter;
  if (snapshotter_.empty()) {
    // The overlayfs plugin loads only after a test mount succeeded.
    LENS_ASSIGN_OR_RETURN(std::string plugins, Ctr({"plugins", "ls"}));
    const std::regex overlay(R"(snapshotter\.v1\s+overlayfs\s+\S+\s+ok\b)");
    snapshotter_ = std::regex_search(plugins, overlay) ? "overlayfs" : "native";
  }
  return OkStatus();
}

Status ContainerdServer::Launch() {
  // Prepared before fork(): after it, only async-signal-safe calls.
  std::vector<std::string> argv = {containerd_bin_, "--config",
                                   dir_ + "/config.toml"};
  std::vector<char*> args, envp;
  for (std::string& a : argv) args.push_back(a.data());
  for (std::string& e : env_) envp.push_back(e.data());
  args.push_back(nullptr);
  envp.push_back(nullptr);
  const std::string run_dir = dir_ + "/run";
  const int log = ::open(log_path().c_str(),
                         O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return ErrnoError(errno, "open " + log_path());
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int ns_fd = mount_ns_fd_;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);  // the terminal's Ctrl-C is for the test, not for us
    ::dup2(null, STDIN_FILENO);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    // containerd dies with its creator thread, even when the test crashes.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(125);
    if (const char* failed = EnterMountNamespace(ns_fd, run_dir.c_str())) {
      const int err = errno;
      static_cast<void>(::write(STDERR_FILENO, failed, std::strlen(failed)));
      ::_exit(err & 0x7f);  // the exit status is the errno
    }
    ::syscall(SYS_close_range, 3U, ~0U, 0U);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(log);
  if (null >= 0) ::close(null);
  if (pid < 0) return ErrnoError(fork_errno, "fork");
  pid_ = pid;
  LENS_RETURN_IF_ERROR(WaitReady());
  if (mount_ns_fd_ < 0) {  // kept so that a restart joins the shims' mounts
    const std::string ns = "/proc/" + std::to_string(pid_) + "/ns/mnt";
    mount_ns_fd_ = ::open(ns.c_str(), O_RDONLY | O_CLOEXEC);
    if (mount_ns_fd_ < 0) return ErrnoError(errno, "open " + ns);
  }
  return OkStatus();
}

Status ContainerdServer::WaitReady() {
  const auto deadline = Clock::now() + kReadyTimeout;
  while (true) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return InternalError("containerd exited during startup (" +
                           Describe(status) + "): " + Tail(log_path()));
    }
    auto r = RunCommand({ctr_bin_, "--address", socket_, "version"},
                        std::chrono::seconds(5));
    if (r.ok() && r->wait_status == 0) return OkStatus();
    if (Clock::now() > deadline) {
      return Status(StatusCode::kDeadlineExceeded,
                    "containerd on " + socket_ +
                        " not answering after 30 s: " + Tail(log_path()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Status ContainerdServer::ImportBusyboxImage(const std::string& ns,
                                            const std::string& ref) {
  if (ref.empty() || !std::regex_match(ref, std::regex("[A-Za-z0-9._:/@-]+"))) {
    return InvalidArgumentError("image ref '" + ref +
                                "': use [A-Za-z0-9._:/@-]");
  }
  if (!image_archives_.count(ref)) {
    auto archive = BuildBusyboxArchive(
        dir_ + "/image-" + std::to_string(image_archives_.size()), ref);
    if (!archive.ok()) return archive.status().WithContext("build image");
    image_archives_[ref] = *archive;
  }
  LENS_RETURN_IF_ERROR(Ctr({"-n", ns, "images", "import", "--snapshotter",
                            snapshotter_, image_archives_[ref]})
                           .status());
  LENS_ASSIGN_OR_RETURN(std::string names,
                        Ctr({"-n", ns, "images", "ls", "-q"}));
  const auto lines = Lines(names);
  if (std::find(lines.begin(), lines.end(), ref) == lines.end()) {
    return InternalError("ctr images import created no image " + ref +
                         " in namespace " + ns + " (has: " + names + ")");
  }
  return OkStatus();
}

Status ContainerdServer::RunDetached(const ContainerSpec& spec) {
  if (spec.id.empty() || spec.image.empty() || spec.ns.empty()) {
    return InvalidArgumentError("ContainerSpec needs id, image and ns");
  }
  std::vector<std::string> args = {"-n", spec.ns};
  if (spec.create_only) {
    args.insert(args.end(), {"containers", "create"});
  } else {
    args.insert(args.end(), {"run", "-d", "--null-io", "--cgroup",
                             cgroup_parent_ + "/" + spec.ns + "/" + spec.id});
  }
  args.insert(args.end(), {"--snapshotter", snapshotter_});
  for (const auto& [key, value] : spec.labels) {
    args.insert(args.end(), {"--label", key + "=" + value});
  }
  for (const std::string& device : spec.devices) {
    args.insert(args.end(), {"--device", device});
  }
  if (spec.privileged) args.push_back("--privileged");
  if (spec.memory_limit_bytes > 0) {
    args.insert(args.end(),
                {"--memory-limit", std::to_string(spec.memory_limit_bytes)});
  }
  args.insert(args.end(), {spec.image, spec.id});
  args.insert(args.end(), spec.args.begin(), spec.args.end());
  return Ctr(args).status();
}

Status ContainerdServer::StartTask(const std::string& id,
                                   const std::string& ns) {
  return Ctr({"-n", ns, "tasks", "start", "-d", "--null-io", id}).status();
}

Status ContainerdServer::KillTask(const std::string& id, int signal,
                                  const std::string& ns) {
  return Ctr({"-n", ns, "tasks", "kill", "-s", std::to_string(signal), id})
      .status();
}

Status ContainerdServer::DeleteTask(const std::string& id,
                                    const std::string& ns) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (true) {
    Status st = Ctr({"-n", ns, "tasks", "delete", id}).status();
    // A killed task is "running" until its shim has reaped it.
    if (st.ok() || st.message().find("must be stopped") == std::string::npos ||
        Clock::now() > deadline) {
      return st;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Status ContainerdServer::DeleteContainer(const std::string& id,
                                         const std::string& ns) {
  return Ctr({"-n", ns, "containers", "delete", id}).status();
}

StatusOr<std::string> ContainerdServer::Exec(
    const std::string& id, const std::vector<std::string>& args,
    const std::string& ns) {
  // The shim opens the I/O fifos in containerd's mount namespace, where the
  // default /run/containerd/fifo is not ours.
  const std::string exec_id = "lens-exec-" + std::to_string(++exec_seq_);
  std::vector<std::string> argv = {
      "-n",    ns,           "tasks",        "exec", "--exec-id",
      exec_id, "--fifo-dir", dir_ + "/fifo", id};
  argv.insert(argv.end(), args.begin(), args.end());
  return Ctr(argv);
}

StatusOr<std::string> ContainerdServer::Ctr(
    const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {ctr_bin_, "--address", socket_};
  argv.insert(argv.end(), args.begin(), args.end());
  StatusOr<std::string> out = RunChecked(argv);
  // ctr prints containerd's error text, which names its gRPC code.
  const std::string& message = out.status().message();
  if (message.find(": not found") != std::string::npos) {
    return NotFoundError(message);
  }
  if (message.find("already exists") != std::string::npos) {
    return Status(StatusCode::kAlreadyExists, message);
  }
  return out;
}

Status ContainerdServer::Kill(int signal) {
  if (pid_ < 0) return OkStatus();
  ::kill(pid_, signal);
  Status st;
  if (!WaitExit(pid_, std::chrono::seconds(10))) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    st = InternalError("containerd (pid " + std::to_string(pid_) +
                       ") ignored " + strsignal(signal) + "; killed");
  }
  pid_ = -1;
  return st;
}

Status ContainerdServer::StartAgain() {
  if (dir_.empty()) {
    return FailedPreconditionError("containerd harness already stopped");
  }
  if (pid_ >= 0) return OkStatus();
  return Launch().WithContext("restart test containerd");
}

Status ContainerdServer::Stop() {
  if (dir_.empty()) return OkStatus();
  if (pid_ >= 0) {
    // Tasks deleted through containerd let their shims exit cleanly.
    auto namespaces = Ctr({"namespaces", "ls", "-q"});
    for (const std::string& ns : Lines(namespaces.ok() ? *namespaces : "")) {
      auto tasks = Ctr({"-n", ns, "tasks", "ls", "-q"});
      for (const std::string& id : Lines(tasks.ok() ? *tasks : "")) {
        static_cast<void>(Ctr({"-n", ns, "tasks", "delete", "-f", id}));
      }
    }
  }
  Status st = Kill(SIGTERM);
  CleanupLeftovers(dir_, runc_bin_);
  if (mount_ns_fd_ >= 0) ::close(mount_ns_fd_);  // frees the namespace
  mount_ns_fd_ = -1;
  std::error_code ec;
  fs::remove_all(dir_, ec);
  if (ec && st.ok()) st = InternalError("remove " + dir_ + ": " + ec.message());
  dir_.clear();
  return st;
}

Status MakeCharDevice(const std::string& path, unsigned major, unsigned minor) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return InternalError("create dir of " + path + ": " + ec.message());
  const dev_t dev = makedev(major, minor);
  if (::mknod(path.c_str(), S_IFCHR | 0666, dev) == 0) {
    // mknod's mode is filtered by the umask.
    if (::chmod(path.c_str(), 0666) == 0) return OkStatus();
    return ErrnoError(errno, "chmod " + path);
  }
  const int err = errno;
  struct stat st {};
  if (err == EEXIST && ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode) &&
      st.st_rdev == dev) {
    return OkStatus();
  }
  return ErrnoError(err, "mknod " + path + " c " + std::to_string(major) + " " +
                             std::to_string(minor));
}

}  // namespace lens::test
