// The SQLite backend of db.h (the embedded default store).
#ifndef LENS_STORE_SQLITE_SQLITE_CONN_H_
#define LENS_STORE_SQLITE_SQLITE_CONN_H_

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "store/db.h"

namespace lens::store {

struct SqliteOptions {
  std::string path;  // database file; its directory must exist
  // How long a writer waits for another process's write lock before the
  // statement fails with kUnavailable (then the runner retries).
  std::chrono::milliseconds busy_timeout{5000};
  // False: a missing database file is kNotFound instead of being created.
  bool create = true;
};

// Parses "sqlite:///abs/path.db" or "sqlite://relative/path.db" into options.
// Query parameters: busy_timeout_ms=N. kInvalidArgument names what is wrong.
StatusOr<SqliteOptions> ParseSqliteUrl(std::string_view url);

// A connector whose connections use WAL journaling, synchronous=NORMAL (a
// committed transaction survives a process crash; the last ones may be lost
// on power loss), foreign keys on and the busy timeout above, and register
// lens_ts()/lens_us() as identities (timestamps are integer microseconds).
// Fails with a clear message when the file's directory does not exist or the
// file is not a database.
StatusOr<std::unique_ptr<Connector>> MakeSqliteConnector(SqliteOptions options);

}  // namespace lens::store

#endif  // LENS_STORE_SQLITE_SQLITE_CONN_H_
