#include "gpu/amd_smi/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <optional>
#include <thread>
#include <utility>

extern char** environ;

namespace lens {
namespace {

using Clock = std::chrono::steady_clock;
using End = ChildProcessResult::End;

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// A close-on-exec pipe whose ends are numbered >= 3, so that dup2 onto 1 and
// 2 in the child always creates a fresh, inheritable descriptor.
Status MakePipe(Fd* read_end, Fd* write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoError(errno, "pipe2");
  Fd ends[2] = {Fd(fds[0]), Fd(fds[1])};
  for (Fd& end : ends) {
    if (end.get() >= 3) continue;
    int moved = ::fcntl(end.get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0) return ErrnoError(errno, "fcntl(F_DUPFD_CLOEXEC)");
    end = Fd(moved);
  }
  *read_end = std::move(ends[0]);
  *write_end = std::move(ends[1]);
  return OkStatus();
}

// posix_spawn file actions and attributes, destroyed with the object.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions_);
    posix_spawnattr_init(&attr_);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  Status Configure(int out_fd, int err_fd) {
    int rc = posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null",
                                              O_RDONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions_, out_fd, 1);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions_, err_fd, 2);
#if defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // Descriptors the caller opened without O_CLOEXEC stay with the caller.
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions_, 3);
#endif
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attr_, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr_, &all);
    if (rc == 0) rc = posix_spawnattr_setpgroup(&attr_, 0);
    if (rc == 0) {
      rc = posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETSIGMASK |
                                                POSIX_SPAWN_SETSIGDEF |
                                                POSIX_SPAWN_SETPGROUP);
    }
    return rc == 0 ? OkStatus() : ErrnoError(rc, "posix_spawn setup");
  }

  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
};

StatusOr<pid_t> Spawn(const std::vector<std::string>& argv, int out_fd,
                      int err_fd) {
  SpawnSetup setup;
  LENS_RETURN_IF_ERROR(setup.Configure(out_fd, err_fd));
  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const char* path = argv[0].c_str();
  int rc = argv[0].find('/') == std::string::npos
               ? posix_spawnp(&pid, path, &setup.actions_, &setup.attr_,
                              args.data(), environ)
               : posix_spawn(&pid, path, &setup.actions_, &setup.attr_,
                             args.data(), environ);
  if (rc != 0) return ErrnoError(rc, "start " + argv[0]);
  return pid;
}

// The spawned child: killed (with its process group) and reaped on scope exit
// unless it was reaped already.
class Child {
 public:
  explicit Child(pid_t pid) : pid_(pid) {}
  ~Child() {
    if (reaped_) return;
    Kill();
    Reap();
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  void Kill() {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);  // in case it left its group
  }
  void Reap() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  // True (with the wait status) once the child has exited. A caller that
  // ignores SIGCHLD makes the kernel reap it first (ECHILD): the status is
  // lost and reported as a clean exit; the output then decides.
  bool TryReap(int* status) {
    pid_t r = ::waitpid(pid_, status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      if (r < 0) *status = 0;
      reaped_ = true;
    }
    return reaped_;
  }

 private:
  pid_t pid_;
  bool reaped_ = false;
};

// Reads what one readable pipe has. Returns kOutputTooLarge when stdout went
// over its limit.
StatusOr<std::optional<End>> ReadSome(Fd* fd, bool is_stdout,
                                      const ChildProcessOptions& options,
                                      ChildProcessResult* result) {
  char buffer[65536];
  ssize_t got = ::read(fd->get(), buffer, sizeof(buffer));
  if (got < 0) {
    if (errno == EINTR || errno == EAGAIN) return std::optional<End>();
    return ErrnoError(errno, "read from child");
  }
  if (got == 0) {
    fd->Reset();
    return std::optional<End>();
  }
  size_t n = static_cast<size_t>(got);
  if (is_stdout) {
    result->out.append(buffer, n);
    if (result->out.size() > options.max_stdout_bytes) {
      return std::optional<End>(End::kOutputTooLarge);
    }
    return std::optional<End>();
  }
  size_t room = options.max_stderr_bytes -
                std::min(result->err.size(), options.max_stderr_bytes);
  result->err.append(buffer, std::min(room, n));
  return std::optional<End>();
}

// Reads both pipes until both reach EOF (nullopt), or the deadline passes,
// or stdout is too large.
StatusOr<std::optional<End>> Drain(Fd* out, Fd* err, Clock::time_point deadline,
                                   const ChildProcessOptions& options,
                                   ChildProcessResult* result) {
  while (out->get() >= 0 || err->get() >= 0) {
    auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return std::optional<End>(End::kTimedOut);
    pollfd fds[2] = {{out->get(), POLLIN, 0}, {err->get(), POLLIN, 0}};
    int ready = ::poll(
        fds, 2, static_cast<int>(std::min<int64_t>(left.count(), INT_MAX)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return ErrnoError(errno, "poll on child output");
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents == 0) continue;
      LENS_ASSIGN_OR_RETURN(
          std::optional<End> cut,
          ReadSome(i == 0 ? out : err, i == 0, options, result));
      if (cut) return cut;
    }
  }
  return std::optional<End>();
}

// After EOF on both pipes: polls for the exit until the deadline.
bool WaitForExit(Child* child, Clock::time_point deadline, int* status) {
  auto pause = std::chrono::microseconds(500);
  for (;;) {
    if (child->TryReap(status)) return true;
    auto now = Clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

}  // namespace

StatusOr<ChildProcessResult> RunChildProcess(
    const std::vector<std::string>& argv, const ChildProcessOptions& options) {
  if (argv.empty() || argv[0].empty()) {
    return InvalidArgumentError("empty command line");
  }
  Fd out_read, out_write, err_read, err_write;
  LENS_RETURN_IF_ERROR(MakePipe(&out_read, &out_write));
  LENS_RETURN_IF_ERROR(MakePipe(&err_read, &err_write));
  Clock::time_point start = Clock::now();
  Clock::time_point deadline = start + options.timeout;
  LENS_ASSIGN_OR_RETURN(pid_t pid,
                        Spawn(argv, out_write.get(), err_write.get()));
  Child child(pid);
  out_write.Reset();  // the child holds the only write ends now
  err_write.Reset();
  ChildProcessResult result;
  LENS_ASSIGN_OR_RETURN(
      std::optional<End> cut,
      Drain(&out_read, &err_read, deadline, options, &result));
  int status = 0;
  if (!cut && !WaitForExit(&child, deadline, &status)) cut = End::kTimedOut;
  if (cut) {
    child.Kill();
    child.Reap();
    result.end = *cut;
  } else if (WIFSIGNALED(status)) {
    result.end = End::kSignaled;
    result.signal = WTERMSIG(status);
  } else {
    result.end = End::kExited;
    result.exit_code = WEXITSTATUS(status);
  }
  result.elapsed = Clock::now() - start;
  return result;
}

}  // namespace lens
