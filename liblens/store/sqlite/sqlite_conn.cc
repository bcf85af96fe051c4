#include "store/sqlite/sqlite_conn.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>
#include <unordered_map>

namespace lens::store {
namespace {

std::string Target(const SqliteOptions& o) { return "sqlite " + o.path; }

// Maps an SQLite result code to our codes (see db.h).
StatusCode CodeFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return StatusCode::kUnavailable;
    case SQLITE_CONSTRAINT:
      return (rc == SQLITE_CONSTRAINT_UNIQUE ||
              rc == SQLITE_CONSTRAINT_PRIMARYKEY)
                 ? StatusCode::kAlreadyExists
                 : StatusCode::kFailedPrecondition;
    case SQLITE_TOOBIG:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
      return StatusCode::kInvalidArgument;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return StatusCode::kDataLoss;
    case SQLITE_FULL:
      return StatusCode::kResourceExhausted;
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return StatusCode::kPermissionDenied;
    case SQLITE_CANTOPEN:
      return StatusCode::kNotFound;
    default:
      return StatusCode::kInternal;
  }
}

// Why SQLite could not open or set up `path`, in words: it needs to create
// the file and its -wal and -shm files in the directory. Empty when nothing
// is visibly wrong.
std::string WhyCannotOpen(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::exists(dir, ec))
    return "directory " + dir.string() + " does not exist";
  if (fs::is_directory(path, ec)) return path + " is a directory";
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
    return "directory " + dir.string() + " is on a read-only file system";
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return "directory " + dir.string() + " is not writable (" +
           std::strerror(errno) +
           "); SQLite creates the database and its -wal and -shm files there";
  }
  if (fs::exists(path, ec) && ::access(path.c_str(), R_OK | W_OK) != 0)
    return path + " is read-only (" + std::string(std::strerror(errno)) + ")";
  return "";
}

// "$12" -> "?12": one placeholder syntax for both engines (db.h). When the
// placeholders are exactly $1, $2, ... in order (every multi-row upsert), they
// become plain "?": SQLite resolves "?NNN" through a name list whose lookup is
// linear per bind, which made 6,000-parameter upserts quadratic.
std::string RewritePlaceholders(std::string_view sql) {
  auto is_digit = [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  };
  bool sequential = true;
  int64_t expect = 1;
  for (size_t i = 0; i + 1 < sql.size() && sequential; ++i) {
    if (sql[i] != '$' || !is_digit(sql[i + 1])) continue;
    int64_t n = 0;
    size_t j = i + 1;
    while (j < sql.size() && is_digit(sql[j])) n = n * 10 + (sql[j++] - '0');
    sequential = n == expect++;
    i = j - 1;
  }
  std::string out;
  out.reserve(sql.size());
  for (size_t i = 0; i < sql.size(); ++i) {
    if (sql[i] == '$' && i + 1 < sql.size() && is_digit(sql[i + 1])) {
      out += '?';
      if (sequential) {
        while (i + 1 < sql.size() && is_digit(sql[i + 1])) ++i;
      }
    } else {
      out += sql[i];
    }
  }
  return out;
}

void Identity(sqlite3_context* ctx, int, sqlite3_value** argv) {
  sqlite3_result_value(ctx, argv[0]);
}

class SqliteConn final : public Conn {
 public:
  SqliteConn(sqlite3* db, std::string target)
      : db_(db), target_(std::move(target)) {}
  ~SqliteConn() override {
    for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }

  Dialect dialect() const override { return Dialect::kSqlite; }
  bool broken() const override { return false; }

  Status Execute(std::string_view sql, std::span<const Param> params,
                 Rows* out) override {
    sqlite3_stmt* stmt = nullptr;
    LENS_RETURN_IF_ERROR(Prepare(sql, &stmt));
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    for (size_t i = 0; i < params.size(); ++i) {
      LENS_RETURN_IF_ERROR(Bind(stmt, static_cast<int>(i + 1), params[i]));
    }
    const int columns = sqlite3_column_count(stmt);
    std::vector<Value> cells;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      if (!out) continue;
      for (int c = 0; c < columns; ++c) cells.push_back(Read(stmt, c));
    }
    if (rc != SQLITE_DONE) {
      Status st = Error(rc, "statement failed");
      sqlite3_reset(stmt);
      return st;
    }
    sqlite3_reset(stmt);
    if (out) *out = Rows(static_cast<size_t>(columns), std::move(cells));
    return OkStatus();
  }

  Status ExecScript(std::string_view sql) override {
    char* err = nullptr;
    const std::string text(sql);
    const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
    std::string msg = err ? err : "";
    sqlite3_free(err);
    if (rc != SQLITE_OK) {
      return Status(CodeFor(rc), target_ + ": script failed: " + msg);
    }
    return OkStatus();
  }

  Status Begin(bool write) override {
    return ExecScript(write ? "BEGIN IMMEDIATE" : "BEGIN");
  }
  Status Commit() override { return ExecScript("COMMIT"); }
  void Rollback() override {
    if (!sqlite3_get_autocommit(db_)) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
  }
  Status LockMigrations() override { return Begin(true); }
  Status UnlockMigrations(bool commit) override {
    if (commit) return Commit();
    Rollback();
    return OkStatus();
  }

 private:
  Status Error(int rc, std::string_view what) const {
    const int ext = sqlite3_extended_errcode(db_);
    return Status(CodeFor(ext ? ext : rc), target_ + ": " + std::string(what) +
                                               ": " + sqlite3_errmsg(db_));
  }

  Status Prepare(std::string_view sql, sqlite3_stmt** stmt) {
    auto it = cache_.find(sql);
    if (it != cache_.end()) {
      *stmt = it->second;
      return OkStatus();
    }
    const std::string text = RewritePlaceholders(sql);
    const int rc =
        sqlite3_prepare_v3(db_, text.c_str(), static_cast<int>(text.size()),
                           SQLITE_PREPARE_PERSISTENT, stmt, nullptr);
    if (rc != SQLITE_OK) return Error(rc, "prepare failed");
    // Bound the cache: multi-row upserts create a statement per chunk size.
    if (cache_.size() >= 256) {
      for (auto& [s, st] : cache_) sqlite3_finalize(st);
      cache_.clear();
    }
    cache_.emplace(std::string(sql), *stmt);
    return OkStatus();
  }

  Status Bind(sqlite3_stmt* stmt, int index, const Param& p) {
    int rc = SQLITE_OK;
    if (auto* i = std::get_if<int64_t>(&p)) {
      rc = sqlite3_bind_int64(stmt, index, *i);
    } else if (auto* d = std::get_if<double>(&p)) {
      rc = sqlite3_bind_double(stmt, index, *d);
    } else if (auto* s = std::get_if<std::string_view>(&p)) {
      rc = sqlite3_bind_text64(stmt, index, s->data(), s->size(),
                               SQLITE_TRANSIENT, SQLITE_UTF8);
    } else if (auto* b = std::get_if<bool>(&p)) {
      rc = sqlite3_bind_int(stmt, index, *b ? 1 : 0);
    } else {
      rc = sqlite3_bind_null(stmt, index);
    }
    if (rc != SQLITE_OK) return Error(rc, "bind failed");
    return OkStatus();
  }

  static Value Read(sqlite3_stmt* stmt, int c) {
    switch (sqlite3_column_type(stmt, c)) {
      case SQLITE_INTEGER:
        return static_cast<int64_t>(sqlite3_column_int64(stmt, c));
      case SQLITE_FLOAT:
        return sqlite3_column_double(stmt, c);
      case SQLITE_TEXT:
      case SQLITE_BLOB: {
        const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt, c));
        return std::string(p ? p : "",
                           static_cast<size_t>(sqlite3_column_bytes(stmt, c)));
      }
      default:
        return std::monostate{};
    }
  }

  sqlite3* db_;
  const std::string target_;
  // Keyed by our SQL text; looked up without copying it (statements reach
  // 30 KB for multi-row upserts).
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>{}(s);
    }
  };
  std::unordered_map<std::string, sqlite3_stmt*, Hash, std::equal_to<>> cache_;
};

class SqliteConnector final : public Connector {
 public:
  explicit SqliteConnector(SqliteOptions o) : options_(std::move(o)) {}
  Dialect dialect() const override { return Dialect::kSqlite; }
  std::string target() const override { return Target(options_); }

  StatusOr<std::unique_ptr<Conn>> Connect() override {
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(
        options_.path.c_str(), &db,
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
        nullptr);
    if (rc != SQLITE_OK) {
      std::string message = target() + ": cannot open: " +
                            (db ? sqlite3_errmsg(db) : "out of memory");
      if (const std::string why = WhyCannotOpen(options_.path); !why.empty())
        message += " (" + why + ")";
      sqlite3_close_v2(db);
      return Status(CodeFor(rc), message);
    }
    auto conn = std::make_unique<SqliteConn>(db, target());
    sqlite3_busy_timeout(db, static_cast<int>(options_.busy_timeout.count()));
    sqlite3_extended_result_codes(db, 1);
    for (const char* fn : {"lens_ts", "lens_us"}) {
      sqlite3_create_function_v2(db, fn, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                 nullptr, Identity, nullptr, nullptr, nullptr);
    }
    LENS_RETURN_IF_ERROR(conn->ExecScript(
        "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;"));
    // journal_mode=WAL persists in the file; setting it needs the write lock
    // only the first time. While other connections open the same new file,
    // SQLite answers BUSY at once (its busy handler is not used for the mode
    // change), so retry for up to busy_timeout.
    const auto deadline =
        std::chrono::steady_clock::now() + options_.busy_timeout;
    while (true) {
      Status st = UseWal(*conn);
      if (st.ok()) break;
      if (st.code() != StatusCode::kUnavailable ||
          std::chrono::steady_clock::now() >= deadline) {
        const std::string why = WhyCannotOpen(options_.path);
        return why.empty() ? st
                           : Status(st.code(), st.message() + " (" + why + ")");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return std::unique_ptr<Conn>(std::move(conn));
  }

  static Status UseWal(SqliteConn& conn) {
    Rows mode;
    LENS_RETURN_IF_ERROR(conn.Execute("PRAGMA journal_mode", {}, &mode));
    if (!mode.empty() && mode.Text(0, 0) == "wal") return OkStatus();
    return conn.ExecScript("PRAGMA journal_mode = WAL");
  }

 private:
  SqliteOptions options_;
};

}  // namespace

StatusOr<SqliteOptions> ParseSqliteUrl(std::string_view url) {
  constexpr std::string_view kScheme = "sqlite://";
  const std::string shown(url);
  if (url.substr(0, kScheme.size()) != kScheme) {
    return InvalidArgumentError("sqlite URL " + shown +
                                ": must start with sqlite://");
  }
  std::string_view rest = url.substr(kScheme.size());
  std::string_view query;
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  SqliteOptions o;
  o.path = std::string(rest);
  if (o.path.empty() || o.path == "/") {
    return InvalidArgumentError("sqlite URL " + shown +
                                ": no database file (sqlite:///path/lens.db)");
  }
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
    const size_t eq = kv.find('=');
    const std::string_view key = kv.substr(0, eq);
    const std::string_view val =
        eq == std::string_view::npos ? "" : kv.substr(eq + 1);
    if (key != "busy_timeout_ms") {
      return InvalidArgumentError("sqlite URL " + shown + ": unknown option '" +
                                  std::string(key) +
                                  "' (known: busy_timeout_ms)");
    }
    int64_t ms = -1;
    auto [p, ec] = std::from_chars(val.data(), val.data() + val.size(), ms);
    if (ec != std::errc() || p != val.data() + val.size() || ms < 0 ||
        ms > 600000) {
      return InvalidArgumentError("sqlite URL " + shown +
                                  ": busy_timeout_ms must be 0..600000");
    }
    o.busy_timeout = std::chrono::milliseconds(ms);
  }
  return o;
}

StatusOr<std::unique_ptr<Connector>> MakeSqliteConnector(
    SqliteOptions options) {
  const size_t slash = options.path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : options.path.substr(0, slash + 1);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return NotFoundError(Target(options) + ": directory " + dir +
                         " does not exist");
  }
  const bool exists = ::stat(options.path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    return InvalidArgumentError(Target(options) +
                                ": is a directory, not a database file");
  }
  if (!exists && !options.create) {
    return NotFoundError(
        Target(options) +
        ": no such database file (lens db migrate creates it)");
  }
  return std::unique_ptr<Connector>(
      std::make_unique<SqliteConnector>(std::move(options)));
}

}  // namespace lens::store
