// Against a real PostgreSQL server started by the test (postgres_server.h).
#include "store/pg/pg_conn.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <thread>

#include "postgres_server.h"

namespace lens::store {
namespace {

using ::lens::test::PostgresServer;
using ::testing::HasSubstr;
using ::testing::Not;

std::unique_ptr<Connector> MakeConnector(const std::string& url) {
  auto parsed = ParsePgUrl(url);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  auto connector = MakePostgresConnector(*parsed);
  EXPECT_TRUE(connector.ok()) << connector.status();
  return std::move(connector).value();
}

class PgConnTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto url = PostgresServer::Shared().CreateDatabase("pg_conn_test");
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = new std::string(*url);
  }
  static void TearDownTestSuite() {
    delete url_;
    url_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(url_, nullptr);
    connector_ = MakeConnector(*url_);
    conn_ = Connect();
    ASSERT_NE(conn_, nullptr);
  }

  std::unique_ptr<Conn> Connect() {
    auto conn = connector_->Connect();
    EXPECT_TRUE(conn.ok()) << conn.status();
    return conn.ok() ? std::move(conn).value() : nullptr;
  }

  static int64_t Scalar(Conn& conn, const std::string& sql) {
    Rows rows;
    Status st = conn.Execute(sql, {}, &rows);
    EXPECT_TRUE(st.ok()) << st;
    return rows.empty() ? -1 : rows.Int(0, 0);
  }
  static int64_t Count(Conn& conn, const std::string& table) {
    return Scalar(conn, "SELECT count(*) FROM " + table);
  }

  static std::string* url_;
  std::unique_ptr<Connector> connector_;
  std::unique_ptr<Conn> conn_;
};

std::string* PgConnTest::url_ = nullptr;

TEST_F(PgConnTest, RoundTripsEveryParamKind) {
  ASSERT_TRUE(conn_
                  ->ExecScript("DROP TABLE IF EXISTS kinds;"
                               "CREATE TABLE kinds (k int, i bigint, "
                               "d double precision, s text, b boolean)")
                  .ok());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::string utf8 = "h\xc3\xa9llo \xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac";
  const std::vector<std::vector<Param>> rows = {
      {int64_t{1}, std::numeric_limits<int64_t>::max(), 0.1,
       std::string_view(utf8), true},
      {int64_t{2}, std::numeric_limits<int64_t>::min(), nan,
       std::string_view("it's \"quoted\" \\ ;"), false},
      {int64_t{3}, int64_t{0}, inf, std::string_view(""), true},
      {int64_t{4}, std::monostate{}, -inf, std::monostate{}, std::monostate{}},
      {int64_t{5}, int64_t{-7}, 123456789.123456789, std::string_view("x"),
       false},
  };
  const std::string insert = "INSERT INTO kinds VALUES ($1, $2, $3, $4, $5)";
  for (const auto& row : rows) {
    Status st = conn_->Execute(insert, row);
    ASSERT_TRUE(st.ok()) << st;
  }
  Rows out;
  ASSERT_TRUE(
      conn_->Execute("SELECT i, d, s, b FROM kinds ORDER BY k", {}, &out).ok());
  ASSERT_EQ(out.size(), 5u);
  ASSERT_EQ(out.columns(), 4u);
  EXPECT_TRUE(std::holds_alternative<std::string>(out.at(0, 0)));
  EXPECT_EQ(out.Int(0, 0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(out.Double(0, 1), 0.1);
  EXPECT_EQ(out.Text(0, 2), utf8);
  EXPECT_TRUE(out.Bool(0, 3));
  EXPECT_EQ(out.Int(1, 0), std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(std::isnan(out.Double(1, 1)));
  EXPECT_EQ(out.Text(1, 2), "it's \"quoted\" \\ ;");
  EXPECT_FALSE(out.Bool(1, 3));
  EXPECT_EQ(out.Text(1, 3), "f");
  EXPECT_EQ(out.Double(2, 1), inf);
  EXPECT_EQ(out.Text(2, 2), "");
  EXPECT_FALSE(out.IsNull(2, 2));
  EXPECT_TRUE(out.IsNull(3, 0));
  EXPECT_EQ(out.Double(3, 1), -inf);
  EXPECT_TRUE(out.IsNull(3, 2));
  EXPECT_TRUE(out.IsNull(3, 3));
  EXPECT_EQ(out.Double(4, 1), 123456789.123456789);
  EXPECT_EQ(out.Int(4, 0), -7);
}

TEST_F(PgConnTest, SelectsParamsDirectly) {
  const Param params[] = {int64_t{42}, 2.5, std::string_view("s"), true,
                          std::monostate{}};
  Rows out;
  Status st = conn_->Execute(
      "SELECT $1::bigint + 1, $2::float8 * 2, $3::text || 't', NOT $4::bool, "
      "$5::text IS NULL",
      params, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out.Int(0, 0), 43);
  EXPECT_EQ(out.Double(0, 1), 5.0);
  EXPECT_EQ(out.Text(0, 2), "st");
  EXPECT_FALSE(out.Bool(0, 3));
  EXPECT_TRUE(out.Bool(0, 4));
}

TEST_F(PgConnTest, CachesPreparedStatementsBySqlText) {
  const std::string sql = "SELECT $1::int + 100";
  for (int64_t i = 0; i < 3; ++i) {
    const Param p[] = {i};
    Rows out;
    ASSERT_TRUE(conn_->Execute(sql, p, &out).ok());
    EXPECT_EQ(out.Int(0, 0), 100 + i);
  }
  const Param p[] = {std::string_view(sql)};
  Rows out;
  ASSERT_TRUE(conn_
                  ->Execute("SELECT count(*), min(name) FROM "
                            "pg_prepared_statements WHERE statement = $1",
                            p, &out)
                  .ok());
  EXPECT_EQ(out.Int(0, 0), 1);
  EXPECT_THAT(out.Text(0, 1), ::testing::StartsWith("lens_s"));
}

TEST_F(PgConnTest, EvictsLeastRecentlyUsedStatements) {
  for (int i = 0; i < 140; ++i) {
    Status st = conn_->Execute("SELECT " + std::to_string(i), {});
    ASSERT_TRUE(st.ok()) << st;
  }
  EXPECT_LE(Count(*conn_, "pg_prepared_statements"), 128);
  Rows out;
  ASSERT_TRUE(conn_->Execute("SELECT 0", {}, &out).ok());  // evicted, again
  EXPECT_EQ(out.Int(0, 0), 0);
}

TEST_F(PgConnTest, ExecScriptRunsSeveralStatements) {
  Status st = conn_->ExecScript(
      "DROP TABLE IF EXISTS script;\n"
      "CREATE TABLE script (x int);\n"
      "INSERT INTO script VALUES (1);\n"
      "INSERT INTO script VALUES (2);");
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(Count(*conn_, "script"), 2);
  st = conn_->ExecScript("INSERT INTO script VALUES (3); SELEC 1;");
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st;
  EXPECT_EQ(Count(*conn_, "script"), 2);  // one implicit transaction
}

TEST_F(PgConnTest, TransactionsCommitAndRollBack) {
  ASSERT_TRUE(conn_
                  ->ExecScript("DROP TABLE IF EXISTS tx;"
                               "CREATE TABLE tx (x int PRIMARY KEY)")
                  .ok());
  auto other = Connect();
  ASSERT_NE(other, nullptr);
  const std::string insert = "INSERT INTO tx VALUES ($1)";
  const Param one[] = {int64_t{1}}, two[] = {int64_t{2}},
              three[] = {int64_t{3}};

  ASSERT_TRUE(conn_->Begin(true).ok());
  ASSERT_TRUE(conn_->Execute(insert, one).ok());
  EXPECT_EQ(Count(*other, "tx"), 0);  // not yet committed
  conn_->Rollback();
  EXPECT_EQ(Count(*other, "tx"), 0);

  ASSERT_TRUE(conn_->Begin(true).ok());
  ASSERT_TRUE(conn_->Execute(insert, two).ok());
  ASSERT_TRUE(conn_->Commit().ok());
  EXPECT_EQ(Count(*other, "tx"), 1);

  // Outside Begin every statement commits on its own.
  ASSERT_TRUE(conn_->Execute(insert, three).ok());
  EXPECT_EQ(Count(*other, "tx"), 2);
}

TEST_F(PgConnTest, CommitOfFailedTransactionFails) {
  ASSERT_TRUE(conn_
                  ->ExecScript("DROP TABLE IF EXISTS failed;"
                               "CREATE TABLE failed (x int PRIMARY KEY)")
                  .ok());
  const Param one[] = {int64_t{1}}, two[] = {int64_t{2}};
  ASSERT_TRUE(conn_->Begin(true).ok());
  ASSERT_TRUE(conn_->Execute("INSERT INTO failed VALUES ($1)", one).ok());
  EXPECT_FALSE(conn_->Execute("SELEC 1", {}).ok());
  Status st = conn_->Execute("INSERT INTO failed VALUES ($1)", two);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st;  // 25P02
  st = conn_->Commit();
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st;
  EXPECT_THAT(st.message(), HasSubstr("rolled back"));
  EXPECT_EQ(Count(*conn_, "failed"), 0);
  EXPECT_FALSE(conn_->broken());
}

TEST_F(PgConnTest, TransactionStateErrors) {
  EXPECT_EQ(conn_->Commit().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(conn_->Begin(true).ok());
  EXPECT_EQ(conn_->Begin(true).code(), StatusCode::kFailedPrecondition);
  conn_->Rollback();
  conn_->Rollback();  // harmless twice
  // A read transaction is read-only (SQLSTATE 25006).
  ASSERT_TRUE(conn_->Begin(false).ok());
  Status st = conn_->ExecScript("CREATE TABLE never (x int)");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st;
  conn_->Rollback();
}

TEST_F(PgConnTest, MapsConstraintAndDataErrors) {
  ASSERT_TRUE(conn_
                  ->ExecScript("DROP TABLE IF EXISTS uniq;"
                               "CREATE TABLE uniq (x int PRIMARY KEY, "
                               "y text NOT NULL)")
                  .ok());
  const std::string insert = "INSERT INTO uniq VALUES ($1, $2)";
  const Param row[] = {int64_t{1}, std::string_view("a")};
  ASSERT_TRUE(conn_->Execute(insert, row).ok());
  Status st = conn_->Execute(insert, row);
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st;
  EXPECT_THAT(st.message(), HasSubstr("postgresql 127.0.0.1:"));
  EXPECT_THAT(st.message(), HasSubstr("uniq_pkey"));
  EXPECT_THAT(st.message(), HasSubstr("INSERT INTO uniq ..."));
  EXPECT_THAT(st.message(), Not(HasSubstr("VALUES")));

  const Param null_y[] = {int64_t{2}, std::monostate{}};
  EXPECT_EQ(conn_->Execute(insert, null_y).code(),
            StatusCode::kFailedPrecondition);

  const Param bad_utf8[] = {int64_t{3}, std::string_view("\xff\xfe bad")};
  st = conn_->Execute(insert, bad_utf8);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st;  // 22021

  const std::string with_nul("a\0b", 3);
  const Param nul[] = {int64_t{4}, std::string_view(with_nul)};
  st = conn_->Execute(insert, nul);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("NUL"));

  const Param big[] = {int64_t{10000000000}};
  EXPECT_EQ(conn_->Execute("SELECT $1::bigint::int", big).code(),
            StatusCode::kInvalidArgument);  // 22003

  EXPECT_EQ(conn_->Execute("SELECT * FROM no_such_table", {}).code(),
            StatusCode::kInternal);
  // Wrong parameter count: 08P01 on a live session is our bug, not an outage.
  st = conn_->Execute(insert, std::span<const Param>(row, 1));
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st;
  EXPECT_FALSE(conn_->broken());
  EXPECT_EQ(Count(*conn_, "uniq"), 1);
}

TEST_F(PgConnTest, WrongPasswordIsPermissionDenied) {
  const std::string secret = "Not-The-Password-9f2e";
  const int port = PostgresServer::Shared().port();
  auto connector = MakeConnector("postgresql://lens:" + secret + "@127.0.0.1:" +
                                 std::to_string(port) + "/pg_conn_test");
  auto conn = connector->Connect();
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), StatusCode::kPermissionDenied)
      << conn.status();
  EXPECT_THAT(conn.status().message(), HasSubstr("127.0.0.1"));
  EXPECT_THAT(conn.status().message(), HasSubstr(std::to_string(port)));
  EXPECT_THAT(conn.status().message(), HasSubstr("password authentication"));
  EXPECT_THAT(conn.status().message(), Not(HasSubstr(secret)));
}

TEST_F(PgConnTest, MissingDatabaseIsNotFound) {
  auto connector = MakeConnector(PostgresServer::Shared().url_for("nope_db"));
  auto conn = connector->Connect();
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), StatusCode::kNotFound) << conn.status();
}

TEST_F(PgConnTest, ClosedPortIsUnavailable) {
  // A port nobody listens on: bound and never listened on, and held bound
  // until the end, so no other process can take it meanwhile (a SYN to it is
  // refused).
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  auto connector = MakeConnector("postgresql://lens:pw-closed-port@127.0.0.1:" +
                                 std::to_string(port) + "/x");
  auto conn = connector->Connect();
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), StatusCode::kUnavailable) << conn.status();
  EXPECT_THAT(conn.status().message(),
              HasSubstr("127.0.0.1:" + std::to_string(port)));
  EXPECT_THAT(conn.status().message(), HasSubstr("refused"));
  EXPECT_THAT(conn.status().message(), Not(HasSubstr("pw-closed-port")));
  ::close(fd);
}

TEST_F(PgConnTest, MigrationLockBlocksSecondConnection) {
  auto other = Connect();
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(conn_->LockMigrations().ok());
  // Bounded, should the lock never come (advisory locks obey lock_timeout).
  ASSERT_TRUE(other->ExecScript("SET lock_timeout = '20s'").ok());
  std::atomic<bool> locked{false};
  auto waiter = std::async(std::launch::async, [&] {
    Status st = other->LockMigrations();
    locked = true;
    return st;
  });
  // Wait until the second session is queued on the lock.
  const std::string waiting =
      "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT "
      "granted";
  for (int i = 0; i < 500 && Scalar(*conn_, waiting) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Scalar(*conn_, waiting), 1);
  EXPECT_FALSE(locked);
  // A migration transaction left open is rolled back by Unlock(false).
  ASSERT_TRUE(conn_->Begin(true).ok());
  ASSERT_TRUE(conn_->ExecScript("CREATE TABLE migrated (x int)").ok());
  ASSERT_TRUE(conn_->UnlockMigrations(false).ok());
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(30)),
            std::future_status::ready);
  Status st = waiter.get();
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(Scalar(*conn_,
                   "SELECT count(*) FROM pg_tables WHERE tablename = "
                   "'migrated'"),
            0);
  EXPECT_EQ(other->LockMigrations().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(other->UnlockMigrations(true).ok());
  EXPECT_EQ(other->UnlockMigrations(true).code(),
            StatusCode::kFailedPrecondition);
  // Released: the first session takes it again at once.
  ASSERT_TRUE(conn_->LockMigrations().ok());
  EXPECT_TRUE(conn_->UnlockMigrations(true).ok());
}

TEST_F(PgConnTest, ServerRestartBreaksOldConnections) {
  ASSERT_TRUE(conn_->Execute("SELECT 1", {}).ok());
  auto in_tx = Connect();
  ASSERT_NE(in_tx, nullptr);
  ASSERT_TRUE(in_tx->Begin(true).ok());

  ASSERT_TRUE(PostgresServer::Shared().Restart().ok());

  Status st = conn_->Execute("SELECT 1", {});
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st;
  EXPECT_TRUE(conn_->broken());
  EXPECT_EQ(conn_->Execute("SELECT 1", {}).code(), StatusCode::kUnavailable);
  conn_->Rollback();  // safe on a broken connection

  st = in_tx->Commit();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st;
  EXPECT_TRUE(in_tx->broken());

  auto fresh = Connect();
  ASSERT_NE(fresh, nullptr);
  Rows out;
  ASSERT_TRUE(fresh->Execute("SELECT 7", {}, &out).ok());
  EXPECT_EQ(out.Int(0, 0), 7);
}

TEST(PgStatusCodeTest, MapsSqlStates) {
  EXPECT_EQ(PgStatusCode("23505"), StatusCode::kAlreadyExists);
  EXPECT_EQ(PgStatusCode("23503"), StatusCode::kFailedPrecondition);
  EXPECT_EQ(PgStatusCode("22021"), StatusCode::kInvalidArgument);
  EXPECT_EQ(PgStatusCode("22003"), StatusCode::kInvalidArgument);
  EXPECT_EQ(PgStatusCode("08006"), StatusCode::kUnavailable);
  EXPECT_EQ(PgStatusCode("57P01"), StatusCode::kUnavailable);
  EXPECT_EQ(PgStatusCode("57P03"), StatusCode::kUnavailable);
  EXPECT_EQ(PgStatusCode("53300"), StatusCode::kUnavailable);
  EXPECT_EQ(PgStatusCode("40P01"), StatusCode::kUnavailable);
  EXPECT_EQ(PgStatusCode("40001"), StatusCode::kUnavailable);
  EXPECT_EQ(PgStatusCode("28P01"), StatusCode::kPermissionDenied);
  EXPECT_EQ(PgStatusCode("28000"), StatusCode::kPermissionDenied);
  EXPECT_EQ(PgStatusCode("42601"), StatusCode::kInternal);
  EXPECT_EQ(PgStatusCode("42P01"), StatusCode::kInternal);
  EXPECT_EQ(PgStatusCode("XX000"), StatusCode::kInternal);
  EXPECT_EQ(PgStatusCode(""), StatusCode::kInternal);
}

}  // namespace
}  // namespace lens::store
