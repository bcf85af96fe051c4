// The narrow SQL interface the two backends (liblens/store/sqlite/,
// liblens/store/pg/) implement, and the connection pool + retrying
// transaction runner the repositories use. Internal to liblens.
//
// SQL is written once, in one dialect both engines accept:
//   - placeholders are $1, $2, ... (the SQLite adapter rewrites them to ?1..);
//   - timestamps are bound and read as int64 microseconds since the Unix epoch
//     through lens_ts($n) / lens_us(col): PostgreSQL stores TIMESTAMPTZ (the
//     functions are created by migration 1), SQLite stores the integer and
//     registers both functions as identities;
//   - JSON columns are bound as text (PostgreSQL: JSONB via "$n::jsonb" that
//     the upsert builder emits; SQLite: TEXT);
//   - booleans are bound as bool (PostgreSQL BOOLEAN, SQLite 0/1).
#ifndef LENS_STORE_DB_H_
#define LENS_STORE_DB_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "lens/status.h"

namespace lens::store {

enum class Dialect { kSqlite, kPostgres };

// A bound parameter. Strings are views: the caller keeps them alive for the
// duration of the call. monostate is SQL NULL.
using Param =
    std::variant<std::monostate, int64_t, double, std::string_view, bool>;

// A result cell. monostate is SQL NULL.
using Value = std::variant<std::monostate, int64_t, double, std::string, bool>;

// A result set, row-major.
class Rows {
 public:
  Rows() = default;
  Rows(size_t columns, std::vector<Value> cells)
      : columns_(columns), cells_(std::move(cells)) {}
  size_t size() const { return columns_ == 0 ? 0 : cells_.size() / columns_; }
  bool empty() const { return size() == 0; }
  size_t columns() const { return columns_; }
  const Value& at(size_t row, size_t col) const {
    return cells_[row * columns_ + col];
  }
  bool IsNull(size_t row, size_t col) const {
    return std::holds_alternative<std::monostate>(at(row, col));
  }
  // Typed reads with the conversions both engines need (PostgreSQL returns
  // every value as text; SQLite returns its storage class).
  int64_t Int(size_t row, size_t col, int64_t if_null = 0) const;
  double Double(size_t row, size_t col, double if_null = 0) const;
  std::string Text(size_t row, size_t col) const;
  bool Bool(size_t row, size_t col) const;

 private:
  size_t columns_ = 0;
  std::vector<Value> cells_;
};

struct UpsertSpec;  // below

// One database connection. Not thread-safe: the pool hands it to one thread
// at a time. Errors:
//   kUnavailable  the connection is lost / the server is down / SQLite busy
//                 past its timeout (the runner reconnects and retries);
//   kInvalidArgument, kAlreadyExists, kFailedPrecondition  constraint and
//                 data errors (never retried);
//   kInternal     anything else.
// Messages name the backend and target ("postgresql 127.0.0.1:5432/lens:
// ...", "sqlite /path/lens.db: ...") and never contain a password.
class Conn {
 public:
  virtual ~Conn() = default;
  virtual Dialect dialect() const = 0;

  // Runs one statement with parameters; statements are prepared once per
  // connection and cached by their text. Fills `out` when given.
  virtual Status Execute(std::string_view sql, std::span<const Param> params,
                         Rows* out = nullptr) = 0;
  // Runs a script of several statements without parameters (migrations).
  virtual Status ExecScript(std::string_view sql) = 0;

  // Transactions. Begin(true) starts a write transaction (SQLite: BEGIN
  // IMMEDIATE, so a second writer waits on the busy timeout at BEGIN, never
  // fails at COMMIT).
  virtual Status Begin(bool write) = 0;
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;  // best effort; safe on a broken connection

  // Serialises schema migrations across processes. PostgreSQL: a session
  // advisory lock; SQLite: BEGIN IMMEDIATE (migrations then run inside that
  // one transaction and Unlock commits or rolls back).
  virtual Status LockMigrations() = 0;
  virtual Status UnlockMigrations(bool commit) = 0;

  // True once the connection is known to be unusable; the pool drops it.
  virtual bool broken() const = 0;

  // Upserts `rows` (each spec.columns.size() params, keys already unique)
  // in as few statements as the backend's bulk path needs (PostgreSQL:
  // unnest() array parameters); the kWrittenUs column takes
  // write_time_us(). Called by UpsertRows inside the caller's transaction.
  // kUnimplemented when the backend has no bulk path (the default) or none
  // for this table: the caller then sends multi-row statements.
  virtual Status UpsertBulk(const UpsertSpec& spec,
                            std::span<const std::vector<Param>* const> rows);

  // The writer's wall clock in microseconds since the Unix epoch, read once
  // when Database::Write began the current transaction (after BEGIN, so on
  // SQLite after the write lock is held): every row the transaction writes
  // carries it as written_us (the change feed, docs/storage.md). Outside
  // Database::Write, the clock now.
  int64_t write_time_us() const;
  void set_write_time_us(int64_t us) { write_time_us_ = us; }

 private:
  int64_t write_time_us_ = 0;  // 0: not in a Database::Write transaction
};

// The wall clock in microseconds since the Unix epoch.
int64_t WallClockUs();

// Opens connections to one database. Thread-safe.
class Connector {
 public:
  virtual ~Connector() = default;
  virtual Dialect dialect() const = 0;
  // "postgresql host:port/db" or "sqlite /path": for messages and status.
  virtual std::string target() const = 0;
  virtual StatusOr<std::unique_ptr<Conn>> Connect() = 0;
};

struct RetryOptions {
  // Total time a transaction keeps retrying on kUnavailable.
  std::chrono::milliseconds deadline{30000};
  std::chrono::milliseconds initial_backoff{50};
  std::chrono::milliseconds max_backoff{2000};
};

// A bounded pool of connections plus the retrying transaction runner.
// Thread-safe.
class Database {
 public:
  Database(std::unique_ptr<Connector> connector, size_t max_connections,
           RetryOptions retry);
  ~Database();

  Dialect dialect() const { return dialect_; }
  const std::string& target() const { return target_; }

  // Runs `fn` inside one write transaction. On kUnavailable (from fn, BEGIN
  // or COMMIT) the connection is dropped and the whole transaction is run
  // again on a new one, with backoff, until the retry deadline. `fn` must
  // therefore be idempotent (our writes are upserts on natural keys).
  Status Write(const std::function<Status(Conn&)>& fn);
  // Same for reads: a read transaction (consistent totals and pages).
  Status Read(const std::function<Status(Conn&)>& fn);
  // Runs `fn` on a pooled connection with no transaction (migrations manage
  // their own locking); `fn` must be idempotent: when it fails Unavailable
  // (a lock held elsewhere) it runs again, up to the retry deadline. A
  // connection that cannot be made is not retried.
  Status WithConn(const std::function<Status(Conn&)>& fn);

  // Counters for metrics and tests.
  uint64_t retries() const;
  uint64_t reconnects() const;

 private:
  class Lease;
  StatusOr<std::unique_ptr<Conn>> Acquire();
  void Release(std::unique_ptr<Conn> conn);
  Status Run(bool write, const std::function<Status(Conn&)>& fn);

  std::unique_ptr<Connector> connector_;
  const Dialect dialect_;
  const std::string target_;
  const size_t max_connections_;
  const RetryOptions retry_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Conn>> idle_;  // GUARDED_BY(mu_)
  size_t open_ = 0;                          // GUARDED_BY(mu_)
  uint64_t retries_ = 0;                     // GUARDED_BY(mu_)
  uint64_t reconnects_ = 0;                  // GUARDED_BY(mu_)
};

// Column kinds for the upsert builder. kWrittenUs: the transaction's
// Conn::write_time_us, which UpsertRows puts in place of the row's value.
enum class ColumnKind { kPlain, kTimestamp, kJson, kWrittenUs };
struct Column {
  std::string_view name;
  ColumnKind kind = ColumnKind::kPlain;
};

// A multi-row "INSERT ... ON CONFLICT (key) DO UPDATE" for one table.
struct UpsertSpec {
  std::string_view table;
  std::span<const Column> columns;  // in parameter order
  size_t key_columns = 1;           // the first N columns are the key
  std::span<const std::string_view> no_update = {};  // kept on conflict
  bool do_nothing = false;                           // ON CONFLICT DO NOTHING
  // Kept on conflict when the new value is NULL (a fact the writer does not
  // know this time, e.g. a start time seen only by an earlier writer).
  std::span<const std::string_view> keep_if_null = {};
};

// Upserts `rows` (each exactly spec.columns.size() params) in chunks of
// multi-row statements on `conn` (inside the caller's transaction). Rows with
// the same key keep the last occurrence (PostgreSQL refuses to touch a row
// twice in one statement). Returns the number of rows sent.
StatusOr<size_t> UpsertRows(Conn& conn, const UpsertSpec& spec,
                            std::span<const std::vector<Param>> rows);

// Builds the statement for `row_count` rows (exposed for tests).
std::string BuildUpsertSql(Dialect dialect, const UpsertSpec& spec,
                           size_t row_count);
// The " ON CONFLICT (key) DO ..." clause that ends BuildUpsertSql's
// statement (the backends' bulk statements end with it too).
std::string BuildConflictClause(const UpsertSpec& spec);

}  // namespace lens::store

#endif  // LENS_STORE_DB_H_
