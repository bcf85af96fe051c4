#include "postgres_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "loopback_traffic.h"
#include "temp_base.h"

namespace lens::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr auto kReadyTimeout = std::chrono::seconds(30);
constexpr auto kInitdbTimeout = std::chrono::seconds(120);

std::string RandomHex(size_t n) {
  std::random_device rd;
  std::string out;
  for (size_t i = 0; i < n; ++i) out.push_back("0123456789abcdef"[rd() % 16]);
  return out;
}

// The last `bytes` of a log file, for error messages.
std::string Tail(const std::string& path, size_t bytes = 2000) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.size() > bytes) text = "..." + text.substr(text.size() - bytes);
  return text.empty() ? "(log " + path + " is empty)" : text;
}

bool IsExecutable(const fs::path& p) { return ::access(p.c_str(), X_OK) == 0; }

bool HasServer(const fs::path& dir) {
  return IsExecutable(dir / "initdb") && IsExecutable(dir / "postgres");
}

// $LENS_PG_BINDIR, /usr/lib/postgresql/<N>/bin (newest first), then PATH.
StatusOr<std::string> FindBinDir() {
  if (const char* env = std::getenv("LENS_PG_BINDIR"); env && *env) {
    if (HasServer(env)) return std::string(env);
    return NotFoundError(std::string("LENS_PG_BINDIR=") + env +
                         " has no initdb and postgres");
  }
  std::error_code ec;
  std::vector<std::pair<int, fs::path>> versions;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string name = e.path().filename().string();
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit) &&
        HasServer(e.path() / "bin")) {
      versions.emplace_back(std::atoi(name.c_str()), e.path() / "bin");
    }
  }
  if (!versions.empty()) {
    return std::max_element(versions.begin(), versions.end())->second.string();
  }
  std::stringstream path(std::getenv("PATH") ? std::getenv("PATH") : "");
  for (std::string dir; std::getline(path, dir, ':');) {
    if (!dir.empty() && HasServer(dir)) return dir;
  }
  return NotFoundError(
      "no PostgreSQL server binaries (initdb, postgres) in $LENS_PG_BINDIR, "
      "/usr/lib/postgresql/*/bin or PATH (Debian: apt install postgresql)");
}

// Waits for `pid` to exit; returns its wait status, or kDeadlineExceeded.
StatusOr<int> WaitExit(pid_t pid, Clock::duration timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return ErrnoError(errno, "waitpid");
    if (Clock::now() > deadline) {
      return Status(StatusCode::kDeadlineExceeded, "still running");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
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

bool ValidDatabaseName(std::string_view name) {
  return !name.empty() && name.size() <= 63 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
         });
}

}  // namespace

StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(
    Options options) {
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  if (Status st = server->Init(options); !st.ok()) {
    return st.WithContext("start test PostgreSQL");
  }
  return server;
}

StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start() {
  return Start(Options());
}

PostgresServer& PostgresServer::Shared() {
  // Destroyed (server stopped, directory removed) by exit().
  static const std::unique_ptr<PostgresServer> server = [] {
    auto started = Start();
    if (!started.ok()) {
      std::fprintf(stderr,
                   "[  FAILED  ] PostgresServer::Shared(): %s\n"
                   "The PostgreSQL tests need their own server; aborting.\n",
                   started.status().ToString().c_str());
      std::fflush(stderr);
      std::abort();
    }
    return std::move(started).value();
  }();
  return *server;
}

PostgresServer::~PostgresServer() {
  static_cast<void>(Stop());
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

Status PostgresServer::Init(const Options& options) {
  if (::geteuid() == 0) {
    // PostgreSQL refuses to run as root.
    passwd pw{};
    passwd* found = nullptr;
    char buf[4096];
    if (::getpwnam_r("postgres", &pw, buf, sizeof(buf), &found) != 0 ||
        !found) {
      return FailedPreconditionError(
          "running as root needs a system user 'postgres' to run the server "
          "as (PostgreSQL refuses to run as root)");
    }
    drop_privileges_ = true;
    uid_ = pw.pw_uid;
    gid_ = pw.pw_gid;
  }
  LENS_ASSIGN_OR_RETURN(bindir_, FindBinDir());

  // The Unix socket path (dir + "/.s.PGSQL.NNNNN") must fit in 107 bytes.
  // Below the shared directory: the postgres user cannot enter this
  // process's own.
  const std::string base = SharedTempBase();
  std::string templ = base + "/lens-pg-XXXXXX";
  if (!::mkdtemp(templ.data())) return ErrnoError(errno, "mkdtemp " + templ);
  dir_ = templ;
  if (drop_privileges_ && ::chown(dir_.c_str(), uid_, gid_) != 0) {
    return ErrnoError(errno, "chown " + dir_ + " to postgres");
  }

  superuser_password_ = RandomHex(24);
  password_ = RandomHex(24);
  const std::string pwfile = dir_ + "/pwfile";
  {
    std::ofstream out(pwfile);
    out << superuser_password_ << "\n";
    if (!out) return InternalError("write " + pwfile);
  }
  if (drop_privileges_ && ::chown(pwfile.c_str(), uid_, gid_) != 0) {
    return ErrnoError(errno, "chown " + pwfile);
  }
  const std::string log = dir_ + "/initdb.log";
  LENS_ASSIGN_OR_RETURN(
      pid_t initdb,
      Spawn({bindir_ + "/initdb", "-D", dir_ + "/data", "-U", "postgres",
             "--pwfile=" + pwfile, "--auth=scram-sha-256", "-E", "UTF8",
             "--locale=C", "--no-sync"},
            log));
  auto status = WaitExit(initdb, kInitdbTimeout);
  if (!status.ok()) {
    ::kill(initdb, SIGKILL);
    ::waitpid(initdb, nullptr, 0);
    return InternalError("initdb did not finish in 120 s: " + Tail(log));
  }
  if (*status != 0) {
    return InternalError("initdb failed (" + Describe(*status) +
                         "): " + Tail(log));
  }
  ::unlink(pwfile.c_str());
  LENS_RETURN_IF_ERROR(WriteConfig(options));

  // Another process may take the port between FreeLoopbackPort() and the
  // bind.
  Status started;
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = FreeLoopbackPort();
    if (port_ == 0) return InternalError("no free port on 127.0.0.1");
    started = Launch();
    if (started.message().find("Address already in use") == std::string::npos) {
      break;
    }
  }
  LENS_RETURN_IF_ERROR(started);
  LENS_RETURN_IF_ERROR(
      Admin("CREATE ROLE lens LOGIN PASSWORD '" + password_ + "'"));
  return Admin("CREATE DATABASE lens_test OWNER lens");
}

Status PostgresServer::WriteConfig(const Options& options) {
  const std::string conf = dir_ + "/data/postgresql.conf";
  std::ofstream out(conf, std::ios::app);
  const char* durable = options.fsync ? "on" : "off";
  // synchronous_commit stays on: without fsync it costs a write(), and an
  // immediate stop (a server crash) then loses no acknowledged commit.
  out << "\n# lens test server\n"
      << "listen_addresses = '" << options.listen_addresses << "'\n"
      << "unix_socket_directories = '" << dir_ << "'\n"
      << "fsync = " << durable << "\n"
      << "synchronous_commit = on\n"
      << "full_page_writes = " << durable << "\n"
      << "max_connections = 100\n"
      << "shared_buffers = 32MB\n"
      << "lc_messages = 'C'\n";
  if (!out) return InternalError("append to " + conf);
  return WriteTlsConfig(options);
}

StatusOr<pid_t> PostgresServer::Spawn(const std::vector<std::string>& argv,
                                      const std::string& log) const {
  // Everything the child needs is prepared before fork(): after it, only
  // async-signal-safe calls until exec.
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int out =
      ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) return ErrnoError(errno, "open " + log);
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(out);
    ::close(null);
    return ErrnoError(err, "fork");
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // the terminal's Ctrl-C is for the test, not for us
    ::dup2(null, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    ::syscall(SYS_close_range, 3U, ~0U, 0U);
    if (drop_privileges_ && (::setgroups(1, &gid_) != 0 ||
                             ::setgid(gid_) != 0 || ::setuid(uid_) != 0)) {
      static const char kMsg[] = "cannot switch to user postgres\n";
      static_cast<void>(::write(STDERR_FILENO, kMsg, sizeof(kMsg) - 1));
      ::_exit(126);
    }
    // Set after setuid (which clears it): the server dies with its creator
    // thread, even when the test process crashes.
    ::prctl(PR_SET_PDEATHSIG, SIGQUIT);
    if (::getppid() != parent) ::_exit(125);
    if (::chdir(dir_.c_str()) != 0) ::_exit(124);
    ::execv(args[0], args.data());
    static const char kMsg[] = "exec failed\n";
    static_cast<void>(::write(STDERR_FILENO, kMsg, sizeof(kMsg) - 1));
    ::_exit(127);
  }
  ::close(out);
  ::close(null);
  return pid;
}

Status PostgresServer::Launch() {
  LENS_ASSIGN_OR_RETURN(
      pid_, Spawn({bindir_ + "/postgres", "-D", dir_ + "/data", "-p",
                   std::to_string(port_)},
                  dir_ + "/postgres.log"));
  Status ready = WaitReady();
  if (!ready.ok()) static_cast<void>(Stop(StopMode::kImmediate));
  return ready;
}

Status PostgresServer::WaitReady() {
  const std::string ping = "host=127.0.0.1 port=" + std::to_string(port_) +
                           " dbname=postgres user=postgres connect_timeout=2"
                           " sslmode=" +
                           admin_sslmode();
  const auto deadline = Clock::now() + kReadyTimeout;
  while (true) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return InternalError("postgres on port " + std::to_string(port_) +
                           " exited during startup (" + Describe(status) +
                           "): " + Tail(dir_ + "/postgres.log"));
    }
    if (PQping(ping.c_str()) == PQPING_OK) return OkStatus();
    if (Clock::now() > deadline) {
      return Status(
          StatusCode::kDeadlineExceeded,
          "postgres on port " + std::to_string(port_) +
              " not ready after 30 s: " + Tail(dir_ + "/postgres.log"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Status PostgresServer::Admin(std::string_view sql) {
  const std::string conninfo =
      "host=127.0.0.1 port=" + std::to_string(port_) +
      " dbname=postgres user=postgres password=" + superuser_password_ +
      " connect_timeout=10 sslmode=" + admin_sslmode();
  PGconn* conn = PQconnectdb(conninfo.c_str());
  Status st;
  if (PQstatus(conn) != CONNECTION_OK) {
    st = UnavailableError(std::string("connect as postgres: ") +
                          PQerrorMessage(conn));
  } else {
    PQsetNoticeProcessor(
        conn, [](void*, const char*) {}, nullptr);  // "skipping" notices
    const std::string text(sql);
    PGresult* res = PQexec(conn, text.c_str());
    const ExecStatusType rc = PQresultStatus(res);
    if (rc != PGRES_COMMAND_OK && rc != PGRES_TUPLES_OK) {
      // The statement is ours and its only secret is the lens password.
      std::string what = text.substr(0, text.find(" PASSWORD"));
      st = InternalError(what + ": " + PQresultErrorMessage(res));
    }
    PQclear(res);
  }
  PQfinish(conn);
  return st;
}

std::string PostgresServer::url() const { return url_for("lens_test"); }

std::string PostgresServer::url_for(std::string_view database) const {
  return "postgresql://lens:" + password_ +
         "@127.0.0.1:" + std::to_string(port_) + "/" + std::string(database);
}

StatusOr<std::string> PostgresServer::CreateDatabase(std::string_view name) {
  if (!ValidDatabaseName(name)) {
    return InvalidArgumentError("database name '" + std::string(name) +
                                "': use [a-z0-9_], at most 63 characters");
  }
  const std::string db(name);
  LENS_RETURN_IF_ERROR(
      Admin("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)"));
  LENS_RETURN_IF_ERROR(Admin("CREATE DATABASE " + db + " OWNER lens"));
  return url_for(db);
}

Status PostgresServer::Restart(StopMode mode) {
  LENS_RETURN_IF_ERROR(Stop(mode));
  return StartAgain();
}

Status PostgresServer::Stop(StopMode mode) {
  if (pid_ < 0) return OkStatus();
  // SIGINT is pg_ctl's "fast" shutdown, SIGQUIT its "immediate" one.
  ::kill(pid_, mode == StopMode::kFast ? SIGINT : SIGQUIT);
  auto exited = WaitExit(pid_, std::chrono::seconds(30));
  if (!exited.ok()) {
    ::kill(pid_, SIGQUIT);
    exited = WaitExit(pid_, std::chrono::seconds(5));
  }
  Status st;
  if (!exited.ok()) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    st = InternalError("postgres (pid " + std::to_string(pid_) +
                       ") ignored SIGINT and SIGQUIT; killed");
  }
  pid_ = -1;
  return st;
}

Status PostgresServer::StartAgain() {
  if (pid_ >= 0) return OkStatus();
  return Launch();
}

}  // namespace lens::test
