// The PostgreSQL bulk upsert (Conn::UpsertBulk in db.h): one statement
//   INSERT INTO t (a, b, ...)
//   SELECT unnest($1::text[]), <lens_ts>(unnest($2::bigint[])), ...
//   ON CONFLICT (...) DO ...
// per chunk of rows, each column's values sent as one array parameter in
// PostgreSQL's array text form. The conflict clause is BuildConflictClause's,
// so the outcome is the multi-row statement's. Measured against COPY into a
// staging table in docs/performance.md.
#ifndef LENS_STORE_PG_PG_BULK_H_
#define LENS_STORE_PG_PG_BULK_H_

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lens/status.h"
#include "store/db.h"

namespace lens::store {

// Upserts through unnest() on one connection; remembers each table's column
// types (read once from pg_catalog, as the array casts need them). Not
// thread-safe: owned by the connection it writes on.
class PgBulkUpserter {
 public:
  // `target` prefixes messages ("postgresql host:port/db").
  explicit PgBulkUpserter(std::string target) : target_(std::move(target)) {}

  // Conn::UpsertBulk on `conn` (the connection that owns this object).
  // kInvalidArgument names the column and row of a string with a NUL byte;
  // kUnimplemented when a column is itself an array (unnest would flatten
  // it); statement errors as Conn::Execute reports them.
  Status Upsert(Conn& conn, const UpsertSpec& spec,
                std::span<const std::vector<Param>* const> rows);

 private:
  // Column name -> format_type() of `table`, read on first use.
  StatusOr<const std::unordered_map<std::string, std::string>*> Types(
      Conn& conn, std::string_view table);

  const std::string target_;
  std::unordered_map<std::string, std::unordered_map<std::string, std::string>>
      types_;  // by table name
};

// The statement for `spec` whose array parameters have the element types
// `types` (one per column, format_type() spelling; a kTimestamp column's
// array is bigint[] and a kWrittenUs column is a scalar of its type).
// Exposed for tests.
std::string BuildUnnestUpsertSql(const UpsertSpec& spec,
                                 std::span<const std::string> types);

// Appends `p` as one element of an array literal ("NULL" or a double-quoted
// text with '"' and '\' escaped); false when a string holds a NUL byte.
// Exposed for tests.
bool AppendArrayElement(const Param& p, std::string* out);

}  // namespace lens::store

#endif  // LENS_STORE_PG_PG_BULK_H_
