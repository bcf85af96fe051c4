#include "store/db.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <thread>
#include <tuple>
#include <unordered_map>

namespace lens::store {

// ---------------------------------------------------------------------------
// Rows: PostgreSQL returns text for every cell, SQLite its storage class.

int64_t Rows::Int(size_t row, size_t col, int64_t if_null) const {
  const Value& v = at(row, col);
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  if (auto* d = std::get_if<double>(&v)) return static_cast<int64_t>(*d);
  if (auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  if (auto* s = std::get_if<std::string>(&v)) {
    int64_t out = 0;
    auto [ptr, ec] = std::from_chars(s->data(), s->data() + s->size(), out);
    if (ec == std::errc()) return out;
    return static_cast<int64_t>(std::strtod(s->c_str(), nullptr));
  }
  return if_null;
}

double Rows::Double(size_t row, size_t col, double if_null) const {
  const Value& v = at(row, col);
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (auto* s = std::get_if<std::string>(&v)) {
    // strtod reads "NaN", "Infinity" and "-Infinity" as PostgreSQL prints.
    return std::strtod(s->c_str(), nullptr);
  }
  return if_null;
}

std::string Rows::Text(size_t row, size_t col) const {
  const Value& v = at(row, col);
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return std::to_string(*d);
  if (auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return {};
}

bool Rows::Bool(size_t row, size_t col) const {
  const Value& v = at(row, col);
  if (auto* b = std::get_if<bool>(&v)) return *b;
  if (auto* i = std::get_if<int64_t>(&v)) return *i != 0;
  if (auto* s = std::get_if<std::string>(&v)) {
    return *s == "t" || *s == "true" || *s == "1";
  }
  return false;
}

// ---------------------------------------------------------------------------
// The writer's clock.

int64_t WallClockUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t Conn::write_time_us() const {
  return write_time_us_ > 0 ? write_time_us_ : WallClockUs();
}

Status Conn::UpsertBulk(const UpsertSpec& spec,
                        std::span<const std::vector<Param>* const>) {
  return UnimplementedError("upsert " + std::string(spec.table) +
                            ": no bulk path");
}

// ---------------------------------------------------------------------------
// Database: pool + retrying runner.

Database::Database(std::unique_ptr<Connector> connector, size_t max_connections,
                   RetryOptions retry)
    : connector_(std::move(connector)),
      dialect_(connector_->dialect()),
      target_(connector_->target()),
      max_connections_(std::max<size_t>(1, max_connections)),
      retry_(retry) {}

Database::~Database() = default;

StatusOr<std::unique_ptr<Conn>> Database::Acquire() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !idle_.empty() || open_ < max_connections_; });
  if (!idle_.empty()) {
    auto conn = std::move(idle_.back());
    idle_.pop_back();
    return conn;
  }
  ++open_;
  lock.unlock();
  auto conn = connector_->Connect();
  if (!conn.ok()) {
    lock.lock();
    --open_;
    cv_.notify_one();
  }
  return conn;
}

void Database::Release(std::unique_ptr<Conn> conn) {
  std::lock_guard lock(mu_);
  if (conn && !conn->broken()) {
    idle_.push_back(std::move(conn));
  } else {
    --open_;
    ++reconnects_;
  }
  cv_.notify_one();
}

Status Database::Run(bool write, const std::function<Status(Conn&)>& fn) {
  const auto deadline = std::chrono::steady_clock::now() + retry_.deadline;
  auto backoff = retry_.initial_backoff;
  while (true) {
    Status st;
    auto conn = Acquire();
    if (!conn.ok()) {
      st = conn.status();
    } else {
      Conn& c = **conn;
      st = c.Begin(write);
      // Read after BEGIN: a retried transaction gets a new time, and on
      // SQLite (BEGIN IMMEDIATE holds the write lock) times follow commits.
      if (st.ok() && write) c.set_write_time_us(WallClockUs());
      if (st.ok()) st = fn(c);
      if (st.ok()) {
        st = c.Commit();
      } else {
        c.Rollback();
      }
      c.set_write_time_us(0);
      if (st.code() == StatusCode::kUnavailable) {
        // Whatever the connection's own view, do not reuse it after a lost
        // transaction: the next attempt starts on a fresh one.
        conn->reset();
      }
      Release(std::move(*conn));
    }
    if (st.code() != StatusCode::kUnavailable ||
        std::chrono::steady_clock::now() + backoff > deadline) {
      return st;
    }
    {
      std::lock_guard lock(mu_);
      ++retries_;
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, retry_.max_backoff);
  }
}

Status Database::Write(const std::function<Status(Conn&)>& fn) {
  return Run(true, fn);
}

Status Database::Read(const std::function<Status(Conn&)>& fn) {
  return Run(false, fn);
}

Status Database::WithConn(const std::function<Status(Conn&)>& fn) {
  const auto deadline = std::chrono::steady_clock::now() + retry_.deadline;
  auto backoff = retry_.initial_backoff;
  while (true) {
    // A connection that cannot be made fails at once (a wrong host or
    // password is not worth waiting for); a lock held by someone else
    // (SQLite BUSY after its busy timeout, a lost connection) is waited out
    // up to the retry deadline, like Write and Read.
    LENS_ASSIGN_OR_RETURN(auto conn, Acquire());
    Status st = fn(*conn);
    if (st.code() == StatusCode::kUnavailable) conn.reset();
    Release(std::move(conn));
    if (st.code() != StatusCode::kUnavailable ||
        std::chrono::steady_clock::now() + backoff > deadline) {
      return st;
    }
    {
      std::lock_guard lock(mu_);
      ++retries_;
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, retry_.max_backoff);
  }
}

uint64_t Database::retries() const {
  std::lock_guard lock(mu_);
  return retries_;
}

uint64_t Database::reconnects() const {
  std::lock_guard lock(mu_);
  return reconnects_;
}

// ---------------------------------------------------------------------------
// Multi-row upserts.

namespace {

// PostgreSQL allows 65535 parameters per statement, SQLite 32766; stay well
// under both and keep statements a size that prepares quickly.
constexpr size_t kMaxParamsPerStatement = 8000;
constexpr size_t kMaxRowsPerStatement = 500;
// Below this many rows a multi-row statement is as fast as a bulk one.
constexpr size_t kMinBulkRows = 2;

bool IsKey(const UpsertSpec& spec, size_t column) {
  return column < spec.key_columns;
}

bool KeepsOld(const UpsertSpec& spec, std::string_view name) {
  return std::find(spec.no_update.begin(), spec.no_update.end(), name) !=
         spec.no_update.end();
}

// A hashable form of a row's key, for in-batch deduplication.
std::string KeyOf(std::span<const Param> row, size_t key_columns) {
  std::string key;
  for (size_t i = 0; i < key_columns && i < row.size(); ++i) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::monostate>) {
            key += "\x01N";
          } else if constexpr (std::is_same_v<T, std::string_view>) {
            key += "\x01S";
            key.append(v);
          } else {
            key += "\x01V" + std::to_string(v);
          }
        },
        row[i]);
  }
  return key;
}

// Statements are ~60 bytes per parameter: built once per (table spec, row
// count, dialect) for the life of the process. Specs are static tables, so
// their column array's address identifies them.
const std::string& CachedUpsertSql(Dialect dialect, const UpsertSpec& spec,
                                   size_t rows) {
  using Key = std::tuple<const void*, const void*, const void*, const void*,
                         size_t, size_t, bool, int>;
  static std::mutex mu;
  static std::map<Key, std::unique_ptr<const std::string>> cache;
  const Key key{spec.table.data(),     spec.columns.data(),
                spec.no_update.data(), spec.keep_if_null.data(),
                spec.key_columns,      rows,
                spec.do_nothing,       static_cast<int>(dialect)};
  std::lock_guard lock(mu);
  auto& slot = cache[key];
  if (!slot) {
    slot = std::make_unique<const std::string>(
        BuildUpsertSql(dialect, spec, rows));
  }
  return *slot;
}

}  // namespace

std::string BuildUpsertSql(Dialect dialect, const UpsertSpec& spec,
                           size_t row_count) {
  const size_t n = spec.columns.size();
  std::string sql = "INSERT INTO ";
  sql.append(spec.table).append(" (");
  for (size_t c = 0; c < n; ++c) {
    if (c) sql += ", ";
    sql.append(spec.columns[c].name);
  }
  sql += ") VALUES ";
  size_t p = 1;
  for (size_t r = 0; r < row_count; ++r) {
    sql += r ? ", (" : "(";
    for (size_t c = 0; c < n; ++c, ++p) {
      if (c) sql += ", ";
      const std::string ph = "$" + std::to_string(p);
      switch (spec.columns[c].kind) {
        case ColumnKind::kTimestamp:
          sql += "lens_ts(" + ph + ")";
          break;
        case ColumnKind::kJson:
          sql += dialect == Dialect::kPostgres ? ph + "::jsonb" : ph;
          break;
        case ColumnKind::kPlain:
        case ColumnKind::kWrittenUs:
          sql += ph;
          break;
      }
    }
    sql += ")";
  }
  return sql + BuildConflictClause(spec);
}

std::string BuildConflictClause(const UpsertSpec& spec) {
  const size_t n = spec.columns.size();
  std::string sql = " ON CONFLICT (";
  for (size_t c = 0; c < spec.key_columns; ++c) {
    if (c) sql += ", ";
    sql.append(spec.columns[c].name);
  }
  sql += ") DO ";
  std::string sets;
  for (size_t c = 0; c < n; ++c) {
    if (IsKey(spec, c) || KeepsOld(spec, spec.columns[c].name)) continue;
    if (!sets.empty()) sets += ", ";
    const std::string_view name = spec.columns[c].name;
    const bool keep_null =
        std::find(spec.keep_if_null.begin(), spec.keep_if_null.end(), name) !=
        spec.keep_if_null.end();
    sets.append(name).append(" = ");
    if (keep_null) {
      sets.append("COALESCE(excluded.")
          .append(name)
          .append(", ")
          .append(spec.table)
          .append(".")
          .append(name)
          .append(")");
    } else {
      sets.append("excluded.").append(name);
    }
  }
  if (spec.do_nothing || sets.empty()) {
    sql += "NOTHING";
  } else {
    sql += "UPDATE SET " + sets;
  }
  return sql;
}

StatusOr<size_t> UpsertRows(Conn& conn, const UpsertSpec& spec,
                            std::span<const std::vector<Param>> rows) {
  const size_t n = spec.columns.size();
  // Last occurrence of each key wins; order otherwise preserved.
  std::vector<const std::vector<Param>*> unique;
  unique.reserve(rows.size());
  {
    std::unordered_map<std::string, size_t> seen;
    seen.reserve(rows.size());
    for (const auto& row : rows) {
      if (row.size() != n) {
        return InternalError("upsert " + std::string(spec.table) +
                             ": row has " + std::to_string(row.size()) +
                             " values, want " + std::to_string(n));
      }
      auto [it, inserted] =
          seen.emplace(KeyOf(row, spec.key_columns), unique.size());
      if (inserted) {
        unique.push_back(&row);
      } else {
        unique[it->second] = &row;
      }
    }
  }
  // Many rows: the backend's bulk path when it has one (one statement with
  // an array per column on PostgreSQL, measured in docs/performance.md).
  if (unique.size() >= kMinBulkRows) {
    Status bulk = conn.UpsertBulk(spec, unique);
    if (bulk.code() != StatusCode::kUnimplemented) {
      LENS_RETURN_IF_ERROR(bulk);
      return unique.size();
    }
  }
  const size_t per_stmt = std::max<size_t>(
      1, std::min(kMaxRowsPerStatement,
                  kMaxParamsPerStatement / std::max<size_t>(1, n)));
  // The change feed's column, when the table has one: the transaction's time.
  size_t written = n;
  for (size_t c = 0; c < n; ++c) {
    if (spec.columns[c].kind == ColumnKind::kWrittenUs) written = c;
  }
  const Param written_us = written < n ? Param(conn.write_time_us()) : Param();
  std::vector<Param> params;
  for (size_t start = 0; start < unique.size(); start += per_stmt) {
    const size_t count = std::min(per_stmt, unique.size() - start);
    const std::string& sql = CachedUpsertSql(conn.dialect(), spec, count);
    params.clear();
    params.reserve(count * n);
    for (size_t r = 0; r < count; ++r) {
      const auto& row = *unique[start + r];
      params.insert(params.end(), row.begin(), row.end());
      if (written < n) params[params.size() - n + written] = written_us;
    }
    LENS_RETURN_IF_ERROR(conn.Execute(sql, params));
  }
  return unique.size();
}

}  // namespace lens::store
