#include "docker_harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <thread>

#include "command.h"
#include "temp_base.h"

extern char** environ;

namespace lens::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kPrefix[] = "lens-dockerd-";

std::string Tail(const std::string& path, size_t bytes = 2000) {
  std::string text = ReadFile(path);
  if (text.size() > bytes) text = "..." + text.substr(text.size() - bytes);
  return text.empty() ? "(log " + path + " is empty)" : text;
}

// SIGKILLs every process whose command line contains `needle`.
void KillMentioning(const std::string& needle) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0])))
      continue;
    std::string cmdline = ReadFile(e.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    const pid_t pid = std::atoi(name.c_str());
    if (pid != ::getpid() && cmdline.find(needle) != std::string::npos) {
      ::kill(pid, SIGKILL);
    }
  }
}

// Containers (runc state under <dir>/exec/runtime-runc/moby), then every
// process of the directory, then the cgroups and the directory.
void Cleanup(const std::string& dir, const std::string& runc) {
  std::error_code ec;
  const std::string root = dir + "/exec/runtime-runc/moby";
  for (const auto& c : fs::directory_iterator(root, ec)) {
    static_cast<void>(RunCommand({runc, "--root", root, "delete", "--force",
                                  c.path().filename().string()},
                                 std::chrono::seconds(10)));
  }
  KillMentioning(dir + "/");
  const std::string group = fs::path(dir).filename().string();
  for (const auto& h : fs::directory_iterator("/sys/fs/cgroup", ec)) {
    const fs::path top = h.path() / group;
    std::error_code ec2;
    if (!fs::is_directory(top, ec2)) continue;
    for (const auto& c : fs::directory_iterator(top, ec2)) {
      if (c.is_directory()) ::rmdir(c.path().c_str());
    }
    ::rmdir(top.c_str());
  }
  fs::remove_all(dir, ec);
}

// Harness directories whose owner died.
void SweepStale(const std::string& base, const std::string& runc) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(base, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kPrefix, 0) != 0) continue;
    const pid_t owner = std::atoi(ReadFile(e.path() / "owner").c_str());
    if (owner > 0 && ::kill(owner, 0) == 0) continue;
    // No owner yet: another test process may have just created it.
    struct stat st;
    if (owner <= 0 && ::stat(e.path().c_str(), &st) == 0 &&
        ::time(nullptr) - st.st_mtime < 60) {
      continue;
    }
    Cleanup(e.path().string(), runc);
  }
}

// In the forked child: async-signal-safe calls only.
const char* EnterMountNamespace(int ns_fd) {
  if (ns_fd >= 0) {
    return ::setns(ns_fd, CLONE_NEWNS) == 0 ? nullptr : "setns failed\n";
  }
  if (::unshare(CLONE_NEWNS) != 0) return "unshare(CLONE_NEWNS) failed\n";
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
    return "making / rslave failed\n";
  }
  return nullptr;
}

}  // namespace

StatusOr<std::unique_ptr<DockerServer>> DockerServer::Start() {
  std::unique_ptr<DockerServer> server(new DockerServer());
  if (Status st = server->Init(); !st.ok()) {
    return st.WithContext("start test dockerd");
  }
  return server;
}

DockerServer::~DockerServer() { static_cast<void>(Stop()); }

Status DockerServer::Init() {
  if (::geteuid() != 0) {
    return FailedPreconditionError("dockerd needs root (euid " +
                                   std::to_string(::geteuid()) + ")");
  }
  for (const char* name : {"dockerd", "containerd", "containerd-shim-runc-v2",
                           "runc", "tar", "/bin/busybox"}) {
    if (name[0] == '/' ? ::access(name, X_OK) != 0 : FindBinary(name).empty()) {
      return FailedPreconditionError(
          std::string(name) + " not found in PATH or " + kStandardPath +
          " (Debian: apt install docker.io busybox-static)");
    }
  }
  dockerd_bin_ = FindBinary("dockerd");
  // Debian's CLI, of the same release as its dockerd, when it is there.
  docker_bin_ = ::access("/usr/bin/docker", X_OK) == 0 ? "/usr/bin/docker"
                                                       : FindBinary("docker");
  if (docker_bin_.empty()) {
    return FailedPreconditionError(
        "docker CLI not found (apt install docker.io)");
  }
  runc_bin_ = FindBinary("runc");
  const std::string base = SharedTempBase();
  SweepStale(base, runc_bin_);
  std::string templ = base + "/" + kPrefix + "XXXXXX";
  if (!::mkdtemp(templ.data())) return ErrnoError(errno, "mkdtemp " + templ);
  dir_ = templ;
  socket_ = dir_ + "/docker.sock";
  cgroup_parent_ = "/" + fs::path(dir_).filename().string();
  LENS_RETURN_IF_ERROR(WriteFile(dir_ + "/owner", std::to_string(::getpid())));
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "PATH=", 5) != 0) env_.push_back(*e);
  }
  env_.push_back(std::string("PATH=") + kStandardPath);
  return Launch();
}

Status DockerServer::Launch() {
  std::vector<std::string> argv = {
      dockerd_bin_, "--data-root=" + dir_ + "/root",
      "--exec-root=" + dir_ + "/exec", "--pidfile=" + dir_ + "/dockerd.pid",
      "--host=unix://" + socket_, "--bridge=none", "--iptables=false",
      "--ip-masq=false", "--userland-proxy=false",
      "--cgroup-parent=" + cgroup_parent_, "--shutdown-timeout=1",
      // Containers outlive a dockerd restart (as in production), and a
      // restart does not wait to stop them.
      "--live-restore", "--log-level=warn"};
  std::vector<char*> args, envp;
  for (std::string& a : argv) args.push_back(a.data());
  for (std::string& e : env_) envp.push_back(e.data());
  args.push_back(nullptr);
  envp.push_back(nullptr);
  const int log = ::open(log_path().c_str(),
                         O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return ErrnoError(errno, "open " + log_path());
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int ns_fd = mount_ns_fd_;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(null, STDIN_FILENO);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(125);
    if (const char* failed = EnterMountNamespace(ns_fd)) {
      const int err = errno;
      static_cast<void>(::write(STDERR_FILENO, failed, std::strlen(failed)));
      ::_exit(err & 0x7f);
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
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (true) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return InternalError("dockerd exited during startup (" +
                           Describe(status) + "): " + Tail(log_path()));
    }
    struct stat st;
    if (::stat(socket_.c_str(), &st) == 0) {
      auto r = RunCommand({docker_bin_, "--host", "unix://" + socket_,
                           "version", "--format", "{{.Server.APIVersion}}"},
                          std::chrono::seconds(5));
      if (r.ok() && r->wait_status == 0) break;
    }
    if (Clock::now() > deadline) {
      return DeadlineExceededError(
          "dockerd on " + socket_ +
          " not answering after 30 s: " + Tail(log_path()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (mount_ns_fd_ < 0) {
    const std::string ns = "/proc/" + std::to_string(pid_) + "/ns/mnt";
    mount_ns_fd_ = ::open(ns.c_str(), O_RDONLY | O_CLOEXEC);
    if (mount_ns_fd_ < 0) return ErrnoError(errno, "open " + ns);
  }
  return OkStatus();
}

StatusOr<std::string> DockerServer::Docker(
    const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {docker_bin_, "--config", dir_ + "/cli",
                                   "--host", "unix://" + socket_};
  argv.insert(argv.end(), args.begin(), args.end());
  StatusOr<std::string> out = RunChecked(argv);
  if (out.status().message().find("No such container") != std::string::npos) {
    return NotFoundError(out.status().message());
  }
  return out;
}

Status DockerServer::ImportBusyboxImage(const std::string& ref) {
  const std::string rootfs = dir_ + "/image-rootfs";
  std::error_code ec;
  fs::create_directories(rootfs + "/bin", ec);
  if (ec) return InternalError("create " + rootfs + ": " + ec.message());
  fs::copy_file("/bin/busybox", rootfs + "/bin/busybox",
                fs::copy_options::overwrite_existing, ec);
  if (ec) return InternalError("copy /bin/busybox: " + ec.message());
  for (const char* applet : {"sh", "sleep", "true", "cat", "echo"}) {
    fs::create_symlink("busybox", rootfs + "/bin/" + applet, ec);
    if (ec && ec != std::errc::file_exists) {
      return InternalError(std::string("symlink ") + applet + ": " +
                           ec.message());
    }
  }
  const std::string tar = dir_ + "/image-rootfs.tar";
  LENS_RETURN_IF_ERROR(
      RunChecked({"tar", "-C", rootfs, "-cf", tar, "."}).status());
  return Docker({"import", tar, ref}).status();
}

StatusOr<std::string> DockerServer::CreateContainer(
    const DockerContainerSpec& spec) {
  std::vector<std::string> args = {"create", "--name", spec.name, "--network",
                                   "none"};
  for (const auto& [k, v] : spec.labels)
    args.insert(args.end(), {"--label", k + "=" + v});
  for (const auto& d : spec.devices) args.insert(args.end(), {"--device", d});
  for (const auto& e : spec.env) args.insert(args.end(), {"--env", e});
  if (spec.privileged) args.push_back("--privileged");
  args.push_back(spec.image);
  args.insert(args.end(), spec.args.begin(), spec.args.end());
  LENS_ASSIGN_OR_RETURN(std::string out, Docker(args));
  const auto lines = Lines(out);
  if (lines.empty() || lines.back().size() != 64) {
    return InternalError("docker create printed no id: " + out);
  }
  return lines.back();
}

Status DockerServer::Kill(int signal) {
  if (pid_ < 0) return OkStatus();
  ::kill(pid_, signal);
  Status st;
  if (!WaitExit(pid_, std::chrono::seconds(20))) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    st = InternalError("dockerd ignored " + std::string(strsignal(signal)) +
                       "; killed");
  }
  pid_ = -1;
  return st;
}

Status DockerServer::StartAgain() {
  if (dir_.empty()) return FailedPreconditionError("dockerd harness stopped");
  if (pid_ >= 0) return OkStatus();
  // A killed dockerd's containerd dies with it, but stays a zombie where
  // nothing reaps orphans (a container's init); dockerd 20.10 takes its pid
  // for a live containerd and waits for it forever. Gone or a zombie: the
  // pid file goes, and dockerd starts a containerd that finds the shims.
  const std::string pidfile = dir_ + "/exec/containerd/containerd.pid";
  const std::string pid = ReadFile(pidfile);
  if (!pid.empty()) {
    const std::string stat = ReadFile("/proc/" + pid + "/stat");
    const size_t close = stat.rfind(')');
    if (stat.empty() ||
        (close != std::string::npos && stat.compare(close, 4, ") Z ") == 0)) {
      ::unlink(pidfile.c_str());
    }
  }
  return Launch().WithContext("restart test dockerd");
}

Status DockerServer::Stop() {
  if (dir_.empty()) return OkStatus();
  if (pid_ >= 0) {
    auto ids = Docker({"ps", "-aq", "--no-trunc"});
    std::vector<std::string> rm = {"rm", "-f"};
    for (const std::string& id : Lines(ids.ok() ? *ids : "")) rm.push_back(id);
    if (rm.size() > 2) static_cast<void>(Docker(rm));
  }
  Status st = Kill(SIGTERM);
  Cleanup(dir_, runc_bin_);
  if (mount_ns_fd_ >= 0) ::close(mount_ns_fd_);
  mount_ns_fd_ = -1;
  dir_.clear();
  return st;
}

}  // namespace lens::test
