// The versioned schema migrations and how they are applied.
#ifndef LENS_STORE_SCHEMA_H_
#define LENS_STORE_SCHEMA_H_

#include <string>
#include <vector>

#include "lens/store.h"
#include "store/db.h"

namespace lens::store {

struct Migration {
  int32_t version;
  std::string name;
  std::string sql;  // a script for Conn::ExecScript, already in the dialect
};

// Every migration this build knows, oldest first, for `dialect`.
std::vector<Migration> Migrations(Dialect dialect);

// Applies pending migrations under the cross-process migration lock (so two
// processes opening one database at once migrate it once). Each migration and
// its lens_schema_migrations row commit together. kFailedPrecondition when
// the database has a version this build does not know.
Status ApplyMigrations(Database& db);

// Reads what is applied; does not change anything.
StatusOr<SchemaStatus> ReadSchemaStatus(Database& db);

}  // namespace lens::store

#endif  // LENS_STORE_SCHEMA_H_
