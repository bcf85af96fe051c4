// The PostgreSQL bulk upsert (pg_bulk.h) against a real server: values of
// every kind survive the array encoding, and the outcome of a batch is the
// multi-row statement's, row for row.
#include "store/pg/pg_bulk.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "postgres_server.h"
#include "store/pg/pg_conn.h"

namespace lens::store {
namespace {

using ::lens::test::PostgresServer;
using ::testing::HasSubstr;

constexpr Column kColumns[] = {
    {"k1"},
    {"k2"},
    {"s"},
    {"d"},
    {"b"},
    {"ts", ColumnKind::kTimestamp},
    {"j", ColumnKind::kJson},
    {"kept"},
    {"keep_null"},
    {"written_us", ColumnKind::kWrittenUs},
};
constexpr std::string_view kKept[] = {"kept"};
constexpr std::string_view kKeepIfNull[] = {"keep_null"};

UpsertSpec Spec(std::string_view table) {
  UpsertSpec spec;
  spec.table = table;
  spec.columns = kColumns;
  spec.key_columns = 2;
  spec.no_update = kKept;
  spec.keep_if_null = kKeepIfNull;
  return spec;
}

constexpr char kCreate[] =
    "(k1 text, k2 bigint, s text, d double precision, b boolean, "
    "ts timestamptz, j jsonb NOT NULL, kept text, keep_null text, "
    "written_us bigint NOT NULL, PRIMARY KEY (k1, k2))";

// Text that means something to an array literal, to COPY or to SQL.
const std::vector<std::string>& Tricky() {
  static const std::vector<std::string> v = {"",
                                             "NULL",
                                             "null",
                                             "a,b",
                                             "{x}",
                                             "\"q\"",
                                             "back\\slash",
                                             "\\N",
                                             "new\nline",
                                             "tab\tx",
                                             " padded ",
                                             "it's ; --",
                                             "\\\"",
                                             "}{,\"\\",
                                             "h\xc3\xa9llo \xe2\x9c\x93"};
  return v;
}

class PgBulkTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto url = PostgresServer::Shared().CreateDatabase("pg_bulk_test");
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = new std::string(*url);
  }
  static void TearDownTestSuite() {
    delete url_;
    url_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(url_, nullptr);
    auto parsed = ParsePgUrl(*url_);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    auto connector = MakePostgresConnector(*parsed);
    ASSERT_TRUE(connector.ok()) << connector.status();
    auto conn = (*connector)->Connect();
    ASSERT_TRUE(conn.ok()) << conn.status();
    conn_ = std::move(conn).value();
    Status st = conn_->ExecScript(
        "CREATE OR REPLACE FUNCTION lens_ts(bigint) RETURNS timestamptz "
        "LANGUAGE sql IMMUTABLE AS "
        "$$ SELECT 'epoch'::timestamptz + $1 * interval '1 microsecond' $$;"
        "DROP TABLE IF EXISTS bulk_a; DROP TABLE IF EXISTS bulk_b;"
        "CREATE TABLE bulk_a " +
        std::string(kCreate) + "; CREATE TABLE bulk_b " + kCreate);
    ASSERT_TRUE(st.ok()) << st;
  }

  Rows All(const std::string& table) {
    Rows rows;
    Status st = conn_->Execute(
        "SELECT k1, k2, s, d, b, (extract(epoch FROM ts) * 1000000)::bigint, "
        "j::text, kept, keep_null, written_us FROM " +
            table + " ORDER BY k1, k2",
        {}, &rows);
    EXPECT_TRUE(st.ok()) << st;
    return rows;
  }

  // Writes `rows` into bulk_a one row per statement (the multi-row path)
  // and into bulk_b in one batch (the bulk path), in one transaction each.
  void WriteBoth(const std::vector<std::vector<Param>>& rows) {
    ASSERT_TRUE(conn_->Begin(true).ok());
    for (const auto& row : rows) {
      auto n = UpsertRows(*conn_, Spec("bulk_a"), {&row, 1});
      ASSERT_TRUE(n.ok()) << n.status();
    }
    ASSERT_TRUE(conn_->Commit().ok());
    std::vector<const std::vector<Param>*> ptrs;
    for (const auto& row : rows) ptrs.push_back(&row);
    ASSERT_TRUE(conn_->Begin(true).ok());
    Status st = conn_->UpsertBulk(Spec("bulk_b"), ptrs);
    ASSERT_TRUE(st.ok()) << st;
    ASSERT_TRUE(conn_->Commit().ok());
  }

  void ExpectSameTables() {
    const Rows a = All("bulk_a");
    const Rows b = All("bulk_b");
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      for (size_t c = 0; c + 1 < a.columns(); ++c) {  // not written_us
        EXPECT_EQ(a.at(i, c), b.at(i, c)) << "row " << i << " column " << c;
      }
    }
  }

  static std::string* url_;
  std::unique_ptr<Conn> conn_;
};

std::string* PgBulkTest::url_ = nullptr;

TEST_F(PgBulkTest, EveryKindOfValueRoundTrips) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> doubles = {0.1, nan, inf, -inf, 1e-300, -0.0};
  const auto& texts = Tricky();
  std::vector<std::string> json(texts.size());
  std::vector<std::vector<Param>> rows;
  for (size_t i = 0; i < texts.size(); ++i) {
    json[i] = "{\"v\": " + std::to_string(i) + "}";
    rows.push_back({std::string_view(texts[i]), int64_t(i),
                    std::string_view(texts[i]), doubles[i % doubles.size()],
                    i % 3 == 0 ? Param() : Param(i % 2 == 0),
                    i % 4 == 0 ? Param() : Param(int64_t(1700000000123456 + i)),
                    std::string_view(json[i]), std::string_view(texts[i]),
                    std::monostate{}, int64_t{0}});
  }
  WriteBoth(rows);
  const Rows b = All("bulk_b");
  ASSERT_EQ(b.size(), texts.size());
  for (size_t i = 0; i < b.size(); ++i) {
    const size_t k = static_cast<size_t>(b.Int(i, 1));
    EXPECT_EQ(b.Text(i, 0), texts[k]);
    EXPECT_EQ(b.Text(i, 2), texts[k]);
    EXPECT_FALSE(b.IsNull(i, 2));
    const double d = doubles[k % doubles.size()];
    if (std::isnan(d)) {
      EXPECT_TRUE(std::isnan(b.Double(i, 3)));
    } else {
      EXPECT_EQ(b.Double(i, 3), d);
    }
    EXPECT_EQ(b.IsNull(i, 4), k % 3 == 0);
    EXPECT_EQ(b.IsNull(i, 5), k % 4 == 0);
    if (k % 4 != 0) {
      EXPECT_EQ(b.Int(i, 5), 1700000000123456 + int64_t(k));
    }
    EXPECT_EQ(b.Text(i, 6), json[k]);
    EXPECT_TRUE(b.IsNull(i, 8));
  }
  ExpectSameTables();
}

TEST_F(PgBulkTest, ConflictsResolveLikeTheMultiRowStatement) {
  std::vector<std::vector<Param>> first, second;
  for (int64_t i = 0; i < 50; ++i) {
    first.push_back({std::string_view("w"), i, std::string_view("old"), 1.0,
                     true, int64_t{1000}, std::string_view("{}"),
                     std::string_view("first"), std::string_view("set"),
                     int64_t{0}});
  }
  // Half of the keys again (with NULLs and new values), half new ones.
  for (int64_t i = 25; i < 75; ++i) {
    second.push_back({std::string_view("w"), i, std::string_view("new"),
                      std::monostate{}, false, std::monostate{},
                      std::string_view("[1]"), std::string_view("second"),
                      i % 2 ? Param() : Param(std::string_view("reset")),
                      int64_t{0}});
  }
  WriteBoth(first);
  WriteBoth(second);
  ExpectSameTables();
  const Rows b = All("bulk_b");
  ASSERT_EQ(b.size(), 75u);
  Rows kept;
  ASSERT_TRUE(conn_
                  ->Execute("SELECT count(*) FILTER (WHERE kept = 'first'), "
                            "count(*) FILTER (WHERE keep_null = 'set'), "
                            "count(*) FILTER (WHERE s = 'new') FROM bulk_b",
                            {}, &kept)
                  .ok());
  EXPECT_EQ(kept.Int(0, 0), 50);       // never updated on conflict
  EXPECT_EQ(kept.Int(0, 1), 25 + 13);  // first-only rows, and NULLs kept
  EXPECT_EQ(kept.Int(0, 2), 50);
}

TEST_F(PgBulkTest, WrittenUsIsTheTransactionsTime) {
  std::vector<std::vector<Param>> rows;
  for (int64_t i = 0; i < 10; ++i) {
    rows.push_back({std::string_view("t"), i, Param(), Param(), Param(),
                    Param(), std::string_view("{}"), Param(), Param(),
                    int64_t{-1}});
  }
  ASSERT_TRUE(conn_->Begin(true).ok());
  conn_->set_write_time_us(1234567);
  auto n = UpsertRows(*conn_, Spec("bulk_b"), rows);
  conn_->set_write_time_us(0);
  ASSERT_TRUE(n.ok()) << n.status();
  ASSERT_TRUE(conn_->Commit().ok());
  Rows out;
  ASSERT_TRUE(conn_
                  ->Execute("SELECT count(*) FROM bulk_b WHERE written_us = "
                            "1234567",
                            {}, &out)
                  .ok());
  EXPECT_EQ(out.Int(0, 0), 10);
}

TEST_F(PgBulkTest, AFailedBatchWritesNothing) {
  std::vector<std::vector<Param>> rows;
  for (int64_t i = 0; i < 100; ++i) {
    // Row 60's JSON is invalid: the server refuses the whole statement.
    rows.push_back({std::string_view("f"), i, Param(), Param(), Param(),
                    Param(), std::string_view(i == 60 ? "{bad" : "{}"), Param(),
                    Param(), int64_t{0}});
  }
  ASSERT_TRUE(conn_->Begin(true).ok());
  auto n = UpsertRows(*conn_, Spec("bulk_b"), rows);
  EXPECT_EQ(n.status().code(), StatusCode::kInvalidArgument) << n.status();
  EXPECT_THAT(n.status().message(), HasSubstr("INSERT INTO bulk_b"));
  conn_->Rollback();
  EXPECT_EQ(All("bulk_b").size(), 0u);
}

TEST_F(PgBulkTest, ANulByteIsRefusedNamingColumnAndRow) {
  const std::string nul("a\0b", 3);
  std::vector<std::vector<Param>> rows;
  for (int64_t i = 0; i < 3; ++i) {
    rows.push_back({std::string_view("n"), i,
                    std::string_view(i == 2 ? std::string_view(nul) : "ok"),
                    Param(), Param(), Param(), std::string_view("{}"), Param(),
                    Param(), int64_t{0}});
  }
  auto n = UpsertRows(*conn_, Spec("bulk_b"), rows);
  EXPECT_EQ(n.status().code(), StatusCode::kInvalidArgument) << n.status();
  EXPECT_THAT(n.status().message(), HasSubstr("column s of row 3"));
  EXPECT_THAT(n.status().message(), HasSubstr("NUL"));
}

TEST_F(PgBulkTest, LargeBatchesSpanSeveralStatements) {
  std::vector<std::string> keys(25000);
  std::vector<std::vector<Param>> rows;
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i] = "key-" + std::to_string(i % 1000);
    rows.push_back({std::string_view(keys[i]), int64_t(i / 1000), Param(),
                    Param(double(i)), Param(), Param(), std::string_view("{}"),
                    Param(), Param(), int64_t{0}});
  }
  ASSERT_TRUE(conn_->Begin(true).ok());
  auto n = UpsertRows(*conn_, Spec("bulk_b"), rows);
  ASSERT_TRUE(n.ok()) << n.status();
  ASSERT_TRUE(conn_->Commit().ok());
  EXPECT_EQ(*n, 25000u);
  Rows out;
  ASSERT_TRUE(
      conn_->Execute("SELECT count(*), sum(d) FROM bulk_b", {}, &out).ok());
  EXPECT_EQ(out.Int(0, 0), 25000);
  EXPECT_EQ(out.Double(0, 1), 24999.0 * 25000 / 2);
}

TEST(PgBulkSql, OneArrayPerColumnAndTheSharedConflictClause) {
  const std::vector<std::string> types = {
      "text",    "bigint", "text",  "double precision",
      "boolean", "bigint", "jsonb", "text",
      "text",    "bigint"};
  const std::string sql = BuildUnnestUpsertSql(Spec("t"), types);
  EXPECT_THAT(sql, HasSubstr("INSERT INTO t (k1, k2, s, d, b, ts, j, kept, "
                             "keep_null, written_us) SELECT "
                             "unnest($1::text[]), unnest($2::bigint[]), "
                             "unnest($3::text[])"));
  EXPECT_THAT(sql, HasSubstr("'epoch'::timestamptz + unnest($6::bigint[]) * "
                             "interval '1 microsecond', unnest($7::jsonb[]), "
                             "unnest($8::text[]), unnest($9::text[]), "
                             "$10::bigint ON CONFLICT"));
  EXPECT_THAT(sql, HasSubstr(BuildConflictClause(Spec("t"))));
  EXPECT_EQ(sql.find(BuildConflictClause(Spec("t"))) +
                BuildConflictClause(Spec("t")).size(),
            sql.size());
}

TEST(PgBulkSql, ArrayElementsAreQuotedAndEscaped) {
  std::string out;
  EXPECT_TRUE(AppendArrayElement(std::string_view("a\"b\\c,{}"), &out));
  EXPECT_EQ(out, "\"a\\\"b\\\\c,{}\"");
  out.clear();
  EXPECT_TRUE(AppendArrayElement(Param(), &out));
  EXPECT_EQ(out, "NULL");
  out.clear();
  EXPECT_TRUE(AppendArrayElement(std::string_view("NULL"), &out));
  EXPECT_EQ(out, "\"NULL\"");
  out.clear();
  EXPECT_TRUE(AppendArrayElement(std::numeric_limits<int64_t>::min(), &out));
  EXPECT_EQ(out, "-9223372036854775808");
  EXPECT_FALSE(AppendArrayElement(std::string_view("a\0b", 3), &out));
}

}  // namespace
}  // namespace lens::store
