// A real, private PostgreSQL server for tests and benchmarks: initdb into a
// fresh temporary directory, listen on 127.0.0.1 on a free port, password
// (SCRAM) authentication, fsync off for speed. Nothing is downloaded:
// the server binaries come from $LENS_PG_BINDIR, /usr/lib/postgresql/<N>/bin
// (newest first) or PATH.
//
// Works as a normal user and as root; as root the server runs as the system
// user `postgres` (PostgreSQL refuses to run as root), so the temporary
// directory must be reachable by that user ($TMPDIR, else /tmp).
#ifndef LENS_TEST_SUPPORT_POSTGRES_SERVER_H_
#define LENS_TEST_SUPPORT_POSTGRES_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens::test {

// url(), url_for(), port() and CreateDatabase() may be called from any
// thread; Restart(), Stop() and StartAgain() must not race with them.
class PostgresServer {
 public:
  struct Options {
    // fsync and full_page_writes (off: fast; a machine crash would lose
    // data, which tests do not care about). synchronous_commit is always on
    // (cheap without fsync), so even an immediate stop loses no commit the
    // server acknowledged.
    bool fsync = false;
    // TLS: when both are set, the server runs with ssl=on and copies of
    // these PEM files (its certificate chain and unencrypted key), and
    // pg_hba.conf accepts TCP connections only over TLS (hostssl), so a
    // client with sslmode=disable is refused. The harness's own sessions use
    // sslmode=require.
    std::string ssl_cert_file;
    std::string ssl_key_file;
    // With TLS: the CA whose client certificates the server asks for and
    // checks (pg_stat_ssl.client_dn shows the one presented); login is
    // still by password. Empty: no client certificates requested.
    std::string ssl_ca_file;
    // postgresql.conf's listen_addresses (the harness connects to the first
    // one, 127.0.0.1): another loopback address lets a test reach the server
    // under a name its certificate does not hold.
    std::string listen_addresses = "127.0.0.1";
  };
  enum class StopMode {
    kFast,       // SIGINT (pg_ctl -m fast): sessions get SQLSTATE 57P01
    kImmediate,  // SIGQUIT (pg_ctl -m immediate): no checkpoint, crash-like
  };

  // Creates the cluster and starts the server: a superuser `postgres`, a
  // login role `lens` (random password) and a database lens_test owned by
  // it. Blocks until the server accepts connections (up to 30 s); errors
  // name the step that failed and include the tail of its log. Call it from
  // a thread that outlives the server: the server is sent SIGQUIT when that
  // thread exits, so a crashed test leaves no server behind.
  static StatusOr<std::unique_ptr<PostgresServer>> Start(Options options);
  static StatusOr<std::unique_ptr<PostgresServer>> Start();  // Options{}

  // One server per process, started on first use and stopped (its directory
  // removed) at exit. If it cannot start, prints the reason and aborts the
  // test program: a PostgreSQL test never skips silently.
  static PostgresServer& Shared();

  // Stops the server (kImmediate when a fast stop hangs, then SIGKILL) and
  // removes the temporary directory.
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // postgresql://lens:<password>@127.0.0.1:<port>/lens_test
  std::string url() const;
  // The same for another database of this server.
  std::string url_for(std::string_view database) const;
  int port() const { return port_; }

  // Drops `name` if it exists and creates it empty, owned by `lens`; returns
  // its URL. `name` is [a-z0-9_], at most 63 characters (kInvalidArgument).
  StatusOr<std::string> CreateDatabase(std::string_view name);

  // Stop(mode) then StartAgain(): same port, same data, sessions lost.
  Status Restart(StopMode mode = StopMode::kFast);
  // Stops the server; a no-op when it is not running.
  Status Stop(StopMode mode = StopMode::kFast);
  // Starts the stopped server again on the same port.
  Status StartAgain();

 private:
  PostgresServer() = default;
  Status Init(const Options& options);
  Status WriteConfig(const Options& options);
  Status WriteTlsConfig(const Options& options);
  // libpq's sslmode for the harness's own sessions.
  const char* admin_sslmode() const { return tls_ ? "require" : "disable"; }
  Status Launch();
  Status WaitReady();
  Status Admin(std::string_view sql);
  StatusOr<pid_t> Spawn(const std::vector<std::string>& argv,
                        const std::string& log) const;

  std::string dir_;     // temporary directory (removed in the destructor)
  std::string bindir_;  // initdb, postgres
  std::string superuser_password_;
  std::string password_;  // of role lens
  bool drop_privileges_ = false;
  bool tls_ = false;  // hostssl only
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  int port_ = 0;
  pid_t pid_ = -1;  // postmaster, -1 when stopped
};

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_POSTGRES_SERVER_H_
