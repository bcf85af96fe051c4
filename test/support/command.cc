#include "command.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace lens::test {
namespace {

using Clock = std::chrono::steady_clock;

std::string Join(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::string ReadAndClose(int fd) {
  std::string out;
  char buf[4096];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;) out.append(buf, n);
  if (fd >= 0) ::close(fd);
  return out;
}

}  // namespace

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  return out ? OkStatus() : InternalError("write " + path);
}

std::string Fill(std::string text,
                 std::initializer_list<std::pair<std::string, std::string>> v) {
  for (const auto& [key, value] : v) {
    for (size_t p; (p = text.find(key)) != std::string::npos;) {
      text.replace(p, key.size(), value);
    }
  }
  return text;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::string Describe(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return "exit status " + std::to_string(WEXITSTATUS(wait_status));
  }
  if (WIFSIGNALED(wait_status)) {
    return std::string("signal ") + strsignal(WTERMSIG(wait_status));
  }
  return "wait status " + std::to_string(wait_status);
}

std::string FindBinary(const std::string& name) {
  const char* env = std::getenv("PATH");
  std::stringstream path(std::string(env ? env : "") + ":" + kStandardPath);
  for (std::string dir; std::getline(path, dir, ':');) {
    const std::string candidate = dir + "/" + name;
    if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

std::optional<int> WaitExit(pid_t pid, Clock::duration timeout) {
  const auto deadline = Clock::now() + timeout;
  for (int status = 0;;
       std::this_thread::sleep_for(std::chrono::milliseconds(5))) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return status;
    if (Clock::now() > deadline) return std::nullopt;
  }
}

StatusOr<std::string> WaitForLoggedUrl(const std::string& log, pid_t pid,
                                       std::string_view key,
                                       Clock::duration timeout) {
  const std::string needle = " " + std::string(key) + "http";
  const auto deadline = Clock::now() + timeout;
  for (;; std::this_thread::sleep_for(std::chrono::milliseconds(10))) {
    const std::string text = ReadFile(log);
    const size_t at = text.find(needle);
    if (at != std::string::npos) {
      const size_t start = at + needle.size() - 4;
      const size_t end = text.find_first_of(" \n\"", start);
      return text.substr(start, end - start);
    }
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      return UnavailableError(
          "exited (" + Describe(status) + ") before it served: " +
          text.substr(text.size() > 4000 ? text.size() - 4000 : 0));
    }
    if (Clock::now() > deadline) {
      return DeadlineExceededError("never logged " + std::string(key) +
                                   "http...: " + text);
    }
  }
}

StatusOr<int> WaitForLoggedPort(const std::string& log, pid_t pid,
                                std::string_view key, Clock::duration timeout) {
  LENS_ASSIGN_OR_RETURN(const std::string url,
                        WaitForLoggedUrl(log, pid, key, timeout));
  // http://host:port[/path]
  const size_t host = url.find("://");
  const size_t slash = url.find('/', host == std::string::npos ? 0 : host + 3);
  const std::string authority = url.substr(0, slash);
  const size_t colon = authority.rfind(':');
  const int port =
      colon == std::string::npos ? 0 : std::atoi(authority.c_str() + colon + 1);
  if (port <= 0) return InvalidArgumentError("no port in " + url);
  return port;
}

StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                   Clock::duration timeout) {
  const std::string program =
      argv[0].find('/') == std::string::npos ? FindBinary(argv[0]) : argv[0];
  if (program.empty()) {
    return NotFoundError(argv[0] + " not found in PATH or " + kStandardPath);
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.data()));
  args.push_back(nullptr);
  const int out = ::memfd_create("stdout", MFD_CLOEXEC);
  const int err = ::memfd_create("stderr", MFD_CLOEXEC);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out, 1);
  posix_spawn_file_actions_adddup2(&actions, err, 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  pid_t pid = -1;
  const int rc = (out < 0 || err < 0)
                     ? errno
                     : ::posix_spawn(&pid, program.c_str(), &actions, nullptr,
                                     args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  std::optional<int> status;
  if (rc == 0 && !(status = WaitExit(pid, timeout))) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  CommandResult result{status.value_or(-1), ReadAndClose(out),
                       ReadAndClose(err)};
  if (rc != 0) return ErrnoError(rc, "spawn " + Join(argv));
  if (!status) {
    return Status(StatusCode::kDeadlineExceeded,
                  Join(argv) + ": still running after timeout; killed");
  }
  return result;
}

StatusOr<std::string> RunChecked(const std::vector<std::string>& argv) {
  LENS_ASSIGN_OR_RETURN(CommandResult r, RunCommand(argv));
  if (r.wait_status == 0) return r.out;
  std::string err =
      r.err.substr(r.err.size() - std::min<size_t>(r.err.size(), 2000));
  while (!err.empty() && err.back() == '\n') err.pop_back();
  return InternalError(Join(argv) + ": " + Describe(r.wait_status) + ": " +
                       err);
}

pid_t Spawn(const std::vector<std::string>& argv, const std::string& log,
            bool stdout_too, bool append, const std::vector<std::string>& env) {
  std::vector<std::string> args = argv;
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  arg_ptrs.push_back(nullptr);
  std::vector<std::string> vars = env;
  for (char** e = environ; *e; ++e) vars.emplace_back(*e);
  std::vector<char*> env_ptrs;
  for (std::string& v : vars) env_ptrs.push_back(v.data());
  env_ptrs.push_back(nullptr);
  const int fd = ::open(
      log.c_str(), O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (fd >= 0) {
      ::dup2(fd, 2);
      if (stdout_too) ::dup2(fd, 1);
    }
    ::execve(arg_ptrs[0], arg_ptrs.data(), env_ptrs.data());
    (void)!::write(2, "execve failed\n", 14);
    ::_exit(127);
  }
  if (fd >= 0) ::close(fd);
  return pid;
}

}  // namespace lens::test
