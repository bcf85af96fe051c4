#include "lens/store.h"

#include "core/redact.h"
#include "store/db.h"
#include "store/open.h"
#include "store/pg/pg_conn.h"
#include "store/pg/pg_url.h"
#include "store/schema.h"
#include "store/sqlite/sqlite_conn.h"

namespace lens::store {

// The URL for messages: no password in any form, even when the scheme is
// wrong (a libpq keyword string), and at most 512 bytes.
std::string RedactUrl(std::string_view url) {
  return RedactCredentials(url.substr(0, 512));
}

namespace {

StatusOr<std::unique_ptr<Connector>> MakeConnector(
    std::string_view url, const StoreOptions& store_options) {
  if (url.starts_with("sqlite://")) {
    LENS_ASSIGN_OR_RETURN(auto options, ParseSqliteUrl(url));
    options.create = store_options.create_if_missing;
    return MakeSqliteConnector(std::move(options));
  }
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) {
    LENS_ASSIGN_OR_RETURN(auto parsed, ParsePgUrl(url));
    return MakePostgresConnector(std::move(parsed));
  }
  return InvalidArgumentError(
      "store URL '" + RedactUrl(url) +
      "': unknown scheme; use sqlite:///path/lens.db or "
      "postgresql://user:password@host:5432/database");
}

}  // namespace

StatusOr<std::unique_ptr<Database>> OpenDatabase(std::string_view url,
                                                 const StoreOptions& options) {
  LENS_ASSIGN_OR_RETURN(auto connector, MakeConnector(url, options));
  RetryOptions retry;
  retry.deadline = options.retry_deadline;
  auto db = std::make_unique<Database>(std::move(connector),
                                       options.max_connections, retry);
  // Connect once now so a bad host or password fails Open, not the first
  // write.
  LENS_RETURN_IF_ERROR(db->WithConn([](Conn&) { return OkStatus(); }));
  return db;
}

}  // namespace lens::store

namespace lens {

StatusOr<std::unique_ptr<Store>> Store::Open(std::string_view url,
                                             StoreOptions options) {
  LENS_ASSIGN_OR_RETURN(auto db, store::OpenDatabase(url, options));
  if (options.migrate) LENS_RETURN_IF_ERROR(store::ApplyMigrations(*db));
  return std::unique_ptr<Store>(new Store(std::move(db)));
}

Store::Store(std::unique_ptr<store::Database> db)
    : db_(std::move(db)),
      nodes_(db_.get()),
      pods_(db_.get()),
      containers_(db_.get()),
      training_(db_.get()),
      storage_(db_.get()),
      samples_(db_.get()) {}

Store::~Store() = default;

StatusOr<SchemaStatus> Store::Migrate() {
  LENS_RETURN_IF_ERROR(store::ApplyMigrations(*db_));
  return store::ReadSchemaStatus(*db_);
}

StatusOr<SchemaStatus> Store::GetSchemaStatus() {
  return store::ReadSchemaStatus(*db_);
}

std::string_view Store::backend() const {
  return db_->dialect() == store::Dialect::kSqlite ? "sqlite" : "postgresql";
}

const std::string& Store::target() const { return db_->target(); }

StoreStats Store::stats() const { return {db_->retries(), db_->reconnects()}; }

}  // namespace lens
