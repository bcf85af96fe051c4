#include "store/pg/pg_bulk.h"

#include <algorithm>
#include <charconv>

#include "core/text.h"

namespace lens::store {
namespace {

// Rows per statement: bounds the arrays (and the server's memory for one
// statement) while keeping one round trip per thousands of rows.
constexpr size_t kMaxRowsPerStatement = 10000;

// A kTimestamp value (int64 microseconds) as TIMESTAMPTZ: lens_ts() of
// schema.cc, inline.
constexpr std::string_view kEpochPlus = "'epoch'::timestamptz + ";
constexpr std::string_view kMicroseconds = " * interval '1 microsecond'";

constexpr std::string_view kTypesSql =
    "SELECT a.attname, format_type(a.atttypid, a.atttypmod) "
    "FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attnum > 0 "
    "AND NOT a.attisdropped";

}  // namespace

bool AppendArrayElement(const Param& p, std::string* out) {
  if (auto* s = std::get_if<std::string_view>(&p)) {
    if (s->find('\0') != std::string_view::npos) return false;
    // Quoted, so that empty text, "NULL", braces, commas and white space
    // are read as they are.
    out->push_back('"');
    for (char c : *s) {
      if (c == '"' || c == '\\') out->push_back('\\');
      out->push_back(c);
    }
    out->push_back('"');
  } else if (auto* i = std::get_if<int64_t>(&p)) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), *i);
    out->append(buf, end);
  } else if (auto* d = std::get_if<double>(&p)) {
    // "NaN", "Infinity" and "-Infinity" are valid unquoted elements.
    AppendDouble(*d, NonFinite::kPostgres, out);
  } else if (auto* b = std::get_if<bool>(&p)) {
    out->append(*b ? "true" : "false");
  } else {
    out->append("NULL");
  }
  return true;
}

std::string BuildUnnestUpsertSql(const UpsertSpec& spec,
                                 std::span<const std::string> types) {
  const size_t n = spec.columns.size();
  std::string names, select;
  for (size_t c = 0; c < n; ++c) {
    const Column& col = spec.columns[c];
    const std::string ph = "$" + std::to_string(c + 1);
    if (c) {
      names += ", ";
      select += ", ";
    }
    names.append(col.name);
    if (col.kind == ColumnKind::kWrittenUs) {
      // One value for every row: a scalar parameter.
      select += ph + "::" + types[c];
      continue;
    }
    // unnest() in the select list: the arrays are read in step, row by row,
    // without first being copied into a tuple store (as FROM unnest(a, b)
    // would).
    const std::string unnest = "unnest(" + ph + "::" + types[c] + "[])";
    if (col.kind == ColumnKind::kTimestamp) {
      // lens_ts()'s body, written out: PostgreSQL cannot inline the
      // function (IMMUTABLE around a STABLE operator) and would run it as a
      // query of its own per row.
      select.append(kEpochPlus).append(unnest).append(kMicroseconds);
    } else {
      select.append(unnest);
    }
  }
  std::string sql = "INSERT INTO ";
  sql.append(spec.table)
      .append(" (")
      .append(names)
      .append(") SELECT ")
      .append(select);
  return sql + BuildConflictClause(spec);
}

StatusOr<const std::unordered_map<std::string, std::string>*>
PgBulkUpserter::Types(Conn& conn, std::string_view table) {
  const std::string key(table);
  if (auto it = types_.find(key); it != types_.end()) return &it->second;
  Rows rows;
  const Param p[] = {table};
  LENS_RETURN_IF_ERROR(conn.Execute(kTypesSql, p, &rows));
  std::unordered_map<std::string, std::string> by_name;
  for (size_t i = 0; i < rows.size(); ++i) {
    by_name.emplace(rows.Text(i, 0), rows.Text(i, 1));
  }
  return &types_.emplace(key, std::move(by_name)).first->second;
}

Status PgBulkUpserter::Upsert(Conn& conn, const UpsertSpec& spec,
                              std::span<const std::vector<Param>* const> rows) {
  LENS_ASSIGN_OR_RETURN(const auto* by_name, Types(conn, spec.table));
  const size_t n = spec.columns.size();
  const std::string what = target_ + ": upsert " + std::string(spec.table);
  // A column the cached types lack: the table was migrated since they were
  // read; read them again once.
  for (size_t c = 0; c < n; ++c) {
    if (!by_name->count(std::string(spec.columns[c].name))) {
      types_.erase(std::string(spec.table));
      LENS_ASSIGN_OR_RETURN(by_name, Types(conn, spec.table));
      break;
    }
  }
  std::vector<std::string> types(n);
  for (size_t c = 0; c < n; ++c) {
    const Column& col = spec.columns[c];
    auto it = by_name->find(std::string(col.name));
    if (it == by_name->end()) {
      return InternalError(what + ": no column " + std::string(col.name));
    }
    if (it->second.ends_with("]")) {
      return UnimplementedError(what + ": column " + std::string(col.name) +
                                " is an array");
    }
    types[c] = col.kind == ColumnKind::kTimestamp ? "bigint" : it->second;
  }
  const std::string sql = BuildUnnestUpsertSql(spec, types);
  const int64_t written_us = conn.write_time_us();
  std::vector<std::string> arrays(n);
  std::vector<Param> params(n);
  for (size_t start = 0; start < rows.size(); start += kMaxRowsPerStatement) {
    const size_t end = std::min(rows.size(), start + kMaxRowsPerStatement);
    for (std::string& a : arrays) a.assign(1, '{');
    for (size_t r = start; r < end; ++r) {
      const std::vector<Param>& row = *rows[r];
      if (row.size() != n) {
        return InternalError(what + ": row has " + std::to_string(row.size()) +
                             " values, want " + std::to_string(n));
      }
      for (size_t c = 0; c < n; ++c) {
        if (spec.columns[c].kind == ColumnKind::kWrittenUs) continue;
        if (r > start) arrays[c].push_back(',');
        if (!AppendArrayElement(row[c], &arrays[c])) {
          return InvalidArgumentError(
              what + ": column " + std::string(spec.columns[c].name) +
              " of row " + std::to_string(r + 1) + " contains a NUL byte");
        }
      }
    }
    for (size_t c = 0; c < n; ++c) {
      arrays[c].push_back('}');
      if (spec.columns[c].kind == ColumnKind::kWrittenUs) {
        params[c] = written_us;
      } else {
        params[c] = std::string_view(arrays[c]);
      }
    }
    LENS_RETURN_IF_ERROR(conn.Execute(sql, params));
  }
  return OkStatus();
}

}  // namespace lens::store
