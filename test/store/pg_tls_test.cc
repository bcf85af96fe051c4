// The store over TLS to a real PostgreSQL server (postgres_server.h) that
// accepts TCP only with TLS (hostssl), with a CA, a server certificate for
// localhost/127.0.0.1 and a client certificate made per run with the openssl
// CLI. The server also listens on 127.0.0.2, a name its certificate does not
// hold.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "lens/store.h"
#include "postgres_server.h"
#include "store/open.h"
#include "store/pg/pg_url.h"

namespace lens::store {
namespace {

namespace fs = std::filesystem;
using ::lens::test::PostgresServer;
using ::lens::test::RunChecked;
using ::testing::HasSubstr;
using ::testing::Not;

// A P-256 key and a certificate for `cn` signed by `ca` (its .crt and .key),
// or self-signed (a CA) when `ca` is empty.
Status MakeCert(const std::string& dir, const std::string& name,
                const std::string& cn, const std::string& ca,
                const std::string& san) {
  const std::string base = dir + "/" + name;
  if (ca.empty()) {
    return RunChecked({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                       "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                       base + ".key", "-out", base + ".crt", "-days", "2",
                       "-subj", "/CN=" + cn})
        .status();
  }
  LENS_RETURN_IF_ERROR(
      RunChecked({"openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
                  "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                  base + ".key", "-out", base + ".csr", "-subj", "/CN=" + cn})
          .status());
  std::vector<std::string> sign = {
      "openssl", "x509",        "-req",   "-in",       base + ".csr",
      "-CA",     ca + ".crt",   "-CAkey", ca + ".key", "-CAcreateserial",
      "-out",    base + ".crt", "-days",  "2"};
  if (!san.empty()) {
    LENS_RETURN_IF_ERROR(
        lens::test::WriteFile(base + ".ext", "subjectAltName=" + san + "\n"));
    sign.insert(sign.end(), {"-extfile", base + ".ext"});
  }
  LENS_RETURN_IF_ERROR(RunChecked(sign).status());
  // libpq refuses a private key others can read.
  if (::chmod((base + ".key").c_str(), 0600) != 0) {
    return ErrnoError(errno, "chmod " + base + ".key");
  }
  return OkStatus();
}

class PgTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (lens::test::FindBinary("openssl").empty()) {
      *skip_ = "the openssl command is not installed (Debian: openssl)";
      return;
    }
    dir_ = new std::string(fs::temp_directory_path() /
                           ("lens-pg-tls-" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    const std::string& d = *dir_;
    for (const Status& st : {
             MakeCert(d, "ca", "lens test CA", "", ""),
             MakeCert(d, "other-ca", "another CA", "", ""),
             MakeCert(d, "server", "localhost", d + "/ca",
                      "DNS:localhost,IP:127.0.0.1"),
             MakeCert(d, "client", "lens", d + "/ca", ""),
         }) {
      ASSERT_TRUE(st.ok()) << st;
    }
    PostgresServer::Options options;
    options.ssl_cert_file = d + "/server.crt";
    options.ssl_key_file = d + "/server.key";
    options.ssl_ca_file = d + "/ca.crt";
    options.listen_addresses = "127.0.0.1,127.0.0.2";
    auto server = PostgresServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
    auto parsed = ParsePgUrl(server_->url());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    password_ = new std::string(parsed->password);
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    if (dir_) fs::remove_all(*dir_);
    delete dir_;
    dir_ = nullptr;
    delete password_;
    password_ = nullptr;
  }

  void SetUp() override {
    if (!skip_->empty()) GTEST_SKIP() << *skip_;
    ASSERT_NE(server_, nullptr) << "the TLS server did not start";
  }

  // The server's URL with `host` and the query `options`.
  static std::string Url(const std::string& host, const std::string& options) {
    return "postgresql://lens:" + *password_ + "@" + host + ":" +
           std::to_string(server_->port()) + "/lens_test?" + options;
  }
  static std::string Ca() { return *dir_ + "/ca.crt"; }

  // Opens the URL and returns the failure (expects one), checking that the
  // message never shows the password.
  static Status OpenFails(const std::string& url) {
    StoreOptions options;
    options.migrate = false;
    auto db = OpenDatabase(url, options);
    EXPECT_FALSE(db.ok()) << url;
    if (db.ok()) return OkStatus();
    EXPECT_THAT(db.status().message(), Not(HasSubstr(*password_)));
    return db.status();
  }

  // One cell of `sql` on a new connection through `url`.
  static std::string Query(const std::string& url, const std::string& sql) {
    StoreOptions options;
    options.migrate = false;
    auto db = OpenDatabase(url, options);
    EXPECT_TRUE(db.ok()) << db.status();
    if (!db.ok()) return "";
    std::string cell;
    Status st = (*db)->Read([&](Conn& c) {
      Rows rows;
      LENS_RETURN_IF_ERROR(c.Execute(sql, {}, &rows));
      cell = rows.empty() ? "(no row)" : rows.Text(0, 0);
      return OkStatus();
    });
    EXPECT_TRUE(st.ok()) << st;
    return cell;
  }

  static std::string* skip_;
  static std::string* dir_;
  static std::string* password_;
  static PostgresServer* server_;
};

std::string* PgTlsTest::skip_ = new std::string();
std::string* PgTlsTest::dir_ = nullptr;
std::string* PgTlsTest::password_ = nullptr;
PostgresServer* PgTlsTest::server_ = nullptr;

constexpr char kSessionTls[] =
    "SELECT ssl::text || ' ' || version FROM pg_stat_ssl "
    "WHERE pid = pg_backend_pid()";

TEST_F(PgTlsTest, VerifyFullWithTheRightCaConnectsOverTls) {
  for (const std::string host : {"127.0.0.1", "localhost"}) {
    const std::string url =
        Url(host, "sslmode=verify-full&sslrootcert=" + Ca());
    EXPECT_THAT(Query(url, kSessionTls), HasSubstr("true TLSv1.3")) << host;
  }
}

TEST_F(PgTlsTest, TheStoreWritesAndReadsOverVerifiedTls) {
  auto store =
      Store::Open(Url("localhost", "sslmode=verify-full&sslrootcert=" + Ca()));
  ASSERT_TRUE(store.ok()) << store.status();
  PodRecord pod;
  pod.uid = "tls-pod";
  pod.name = "trainer";
  pod.namespace_name = "tls";
  pod.node = "node-1";
  pod.updated_at = Timestamp(std::chrono::microseconds(1700000000000000));
  ASSERT_TRUE((*store)->pods().UpsertPods({&pod, 1}).ok());
  auto got = (*store)->pods().GetPod("tls-pod");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->name, "trainer");
  EXPECT_THAT((*store)->target(), Not(HasSubstr(*password_)));
}

TEST_F(PgTlsTest, AServerCertificateFromAnotherCaIsRefused) {
  const Status st =
      OpenFails(Url("127.0.0.1", "sslmode=verify-full&sslrootcert=" + *dir_ +
                                     "/other-ca.crt"));
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st;
  EXPECT_THAT(st.message(), HasSubstr("certificate verify failed"));
  EXPECT_THAT(st.message(), HasSubstr("not signed by a CA in sslrootcert"));
  EXPECT_THAT(st.message(), HasSubstr("postgresql 127.0.0.1:"));
}

TEST_F(PgTlsTest, AHostNameTheCertificateDoesNotHoldIsRefused) {
  const Status st =
      OpenFails(Url("127.0.0.2", "sslmode=verify-full&sslrootcert=" + Ca()));
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st;
  EXPECT_THAT(st.message(), HasSubstr("does not match host name"));
  EXPECT_THAT(st.message(), HasSubstr("\"127.0.0.2\""));
  // The chain itself is good: verify-ca, which skips the name, connects.
  EXPECT_THAT(Query(Url("127.0.0.2", "sslmode=verify-ca&sslrootcert=" + Ca()),
                    kSessionTls),
              HasSubstr("true"));
}

TEST_F(PgTlsTest, PlainTcpIsRefusedByAHostsslOnlyServer) {
  const Status st = OpenFails(Url("127.0.0.1", "sslmode=disable"));
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied) << st;
  EXPECT_THAT(st.message(), HasSubstr("no pg_hba.conf entry"));
  EXPECT_THAT(st.message(), HasSubstr("no encryption"));
}

TEST_F(PgTlsTest, AMissingRootCertificateFileIsNamed) {
  const std::string missing = *dir_ + "/no-such-ca.crt";
  const Status st =
      OpenFails(Url("127.0.0.1", "sslmode=verify-full&sslrootcert=" + missing));
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st;
  EXPECT_THAT(st.message(), HasSubstr(missing));
}

TEST_F(PgTlsTest, SslcertAndSslkeyPresentAClientCertificate) {
  const std::string url =
      Url("localhost", "sslmode=verify-full&sslrootcert=" + Ca() +
                           "&sslcert=" + *dir_ + "/client.crt&sslkey=" + *dir_ +
                           "/client.key");
  EXPECT_EQ(Query(url,
                  "SELECT client_dn FROM pg_stat_ssl WHERE pid = "
                  "pg_backend_pid()"),
            "/CN=lens");
  // Without them the server sees none.
  EXPECT_EQ(Query(Url("localhost", "sslmode=verify-full&sslrootcert=" + Ca()),
                  "SELECT coalesce(client_dn, 'none') FROM pg_stat_ssl WHERE "
                  "pid = pg_backend_pid()"),
            "none");
}

TEST_F(PgTlsTest, AKeyOthersCanReadIsRefusedNamingTheFile) {
  const std::string key = *dir_ + "/client-open.key";
  fs::copy_file(*dir_ + "/client.key", key,
                fs::copy_options::overwrite_existing);
  ASSERT_EQ(::chmod(key.c_str(), 0644), 0);
  const Status st = OpenFails(
      Url("localhost", "sslmode=verify-full&sslrootcert=" + Ca() +
                           "&sslcert=" + *dir_ + "/client.crt&sslkey=" + key));
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st;
  EXPECT_THAT(st.message(), HasSubstr(key));
}

}  // namespace
}  // namespace lens::store
