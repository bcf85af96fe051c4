#include <chrono>

#include "store/schema.h"

namespace lens::store {
namespace {

constexpr std::string_view kCreateMigrationsTable =
    "CREATE TABLE IF NOT EXISTS lens_schema_migrations ("
    " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
    " applied_at_us BIGINT NOT NULL)";

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// version -> applied_at (us) of the applied migrations.
StatusOr<std::vector<std::pair<int32_t, int64_t>>> Applied(Conn& c) {
  Rows rows;
  LENS_RETURN_IF_ERROR(
      c.Execute("SELECT version, applied_at_us FROM lens_schema_migrations "
                "ORDER BY version",
                {}, &rows));
  std::vector<std::pair<int32_t, int64_t>> out;
  for (size_t r = 0; r < rows.size(); ++r) {
    out.emplace_back(static_cast<int32_t>(rows.Int(r, 0)), rows.Int(r, 1));
  }
  return out;
}

Status ApplyPending(Conn& c, const std::string& target) {
  LENS_ASSIGN_OR_RETURN(auto applied, Applied(c));
  const auto all = Migrations(c.dialect());
  const int32_t latest = all.empty() ? 0 : all.back().version;
  const int32_t current = applied.empty() ? 0 : applied.back().first;
  if (current > latest) {
    return FailedPreconditionError(target + ": database schema version " +
                                   std::to_string(current) +
                                   " is newer than this build of Lens knows (" +
                                   std::to_string(latest) + "); upgrade Lens");
  }
  for (const Migration& m : all) {
    if (m.version <= current) continue;
    // PostgreSQL: one transaction per migration inside the advisory lock.
    // SQLite: the lock is itself the (single) transaction.
    const bool own_tx = c.dialect() == Dialect::kPostgres;
    if (own_tx) LENS_RETURN_IF_ERROR(c.Begin(true));
    Status st = c.ExecScript(m.sql);
    if (st.ok()) {
      const Param params[] = {int64_t{m.version}, std::string_view(m.name),
                              NowUs()};
      st = c.Execute(
          "INSERT INTO lens_schema_migrations (version, name, applied_at_us) "
          "VALUES ($1, $2, $3)",
          params);
    }
    if (own_tx) {
      if (st.ok()) {
        st = c.Commit();
      } else {
        c.Rollback();
      }
    }
    if (!st.ok()) {
      return Status(st.code(), "migration " + std::to_string(m.version) + " (" +
                                   m.name + "): " + st.message());
    }
  }
  return OkStatus();
}

}  // namespace

Status ApplyMigrations(Database& db) {
  return db.WithConn([&](Conn& c) -> Status {
    // Lock first: concurrent CREATE TABLE IF NOT EXISTS can collide in
    // PostgreSQL's catalog.
    LENS_RETURN_IF_ERROR(c.LockMigrations());
    Status st = c.ExecScript(kCreateMigrationsTable);
    if (st.ok()) st = ApplyPending(c, db.target());
    Status unlock = c.UnlockMigrations(st.ok());
    return st.ok() ? unlock : st;
  });
}

StatusOr<SchemaStatus> ReadSchemaStatus(Database& db) {
  SchemaStatus out;
  out.backend = db.dialect() == Dialect::kSqlite ? "sqlite" : "postgresql";
  out.target = db.target();
  Status st = db.WithConn([&](Conn& c) -> Status {
    // Read-only: a database never migrated has no table yet.
    Rows exists;
    LENS_RETURN_IF_ERROR(c.Execute(
        c.dialect() == Dialect::kSqlite
            ? "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
              "name = 'lens_schema_migrations'"
            : "SELECT count(*) FROM information_schema.tables WHERE "
              "table_schema = current_schema() AND "
              "table_name = 'lens_schema_migrations'",
        {}, &exists));
    std::vector<std::pair<int32_t, int64_t>> applied;
    if (exists.Int(0, 0) > 0) {
      LENS_ASSIGN_OR_RETURN(applied, Applied(c));
    }
    for (const Migration& m : Migrations(c.dialect())) {
      MigrationInfo info{m.version, m.name, false, std::nullopt};
      for (const auto& [v, at] : applied) {
        if (v != m.version) continue;
        info.applied = true;
        info.applied_at = Timestamp(std::chrono::microseconds(at));
      }
      out.latest_version = m.version;
      out.migrations.push_back(std::move(info));
    }
    if (!applied.empty()) out.current_version = applied.back().first;
    return OkStatus();
  });
  if (!st.ok()) return st;
  return out;
}

}  // namespace lens::store
