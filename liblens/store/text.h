// Input checks and normalisation shared by every repository, so both backends
// store exactly the same bytes (docs/storage.md, "Input rules").
#ifndef LENS_STORE_TEXT_H_
#define LENS_STORE_TEXT_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/text.h"
#include "lens/model.h"
#include "lens/status.h"
#include "store/db.h"

namespace lens::store {

// Size limits (bytes).
inline constexpr size_t kMaxKeyBytes = 253;       // names, uids, ids
inline constexpr size_t kMaxTextBytes = 4096;     // paths, images, free text
inline constexpr size_t kMaxLabelsBytes = 65536;  // *_json except snapshots
inline constexpr size_t kMaxSnapshotBytes = 1 << 20;

// Text is sanitised with lens::SanitizeUtf8 (core/text.h).
using lens::SanitizeUtf8;

// Sanitises `*s` and checks its size: kInvalidArgument "<table>.<field>:
// value of N bytes exceeds the limit of M".
Status CheckText(std::string_view table, std::string_view field, std::string* s,
                 size_t max_bytes);
// CheckText for several fields of one row: {"field", &value} pairs.
Status CheckTexts(
    std::string_view table,
    std::initializer_list<std::pair<std::string_view, std::string*>> fields,
    size_t max_bytes);
// The same, and the value must not be empty.
Status CheckKey(std::string_view table, std::string_view field, std::string* s);
// Checks that `*s` is a JSON object or array of at most max_bytes ("" becomes
// "{}"); kInvalidArgument with the parse error offset otherwise.
Status CheckJson(std::string_view table, std::string_view field, std::string* s,
                 size_t max_bytes = kMaxLabelsBytes);
// Labels as the JSON object a labels column holds (keys and values UTF-8
// sanitised); kInvalidArgument "<table>.labels: ..." over kMaxLabelsBytes.
StatusOr<std::string> LabelsColumn(std::string_view table,
                                   const Labels& labels);
// A labels column read back: the object's string members (other members
// skipped); empty labels for anything but an object.
Labels ReadLabels(std::string_view json);
// A timestamp must be set (the original wrote zero times).
Status CheckTime(std::string_view table, std::string_view field, Timestamp t);
// Checks `updated` and defaults an unset `*created` to it (rows whose
// creation time the caller does not know).
Status CheckTimes(std::string_view table, Timestamp* created,
                  Timestamp updated);

// A 64-bit FNV-1a digest as 16 hex digits: tells "changed" from "unchanged"
// and names runs; not a security hash.
std::string HexDigest64(std::string_view s);

// The page and sort checks of the List* queries. Returns the ORDER BY
// column for `sort.key` from `allowed` (pairs of key, SQL expression); the
// first entry is the default.
struct SortKey {
  std::string_view key;
  std::string_view sql;  // column or expression
  bool default_descending = false;
};
StatusOr<std::string> OrderBy(std::string_view what, const Sort& sort,
                              std::initializer_list<SortKey> allowed);
Status CheckPage(const PageRequest& page);

inline int64_t Us(Timestamp t) { return t.time_since_epoch().count(); }
inline Timestamp FromUs(int64_t us) {
  return Timestamp(std::chrono::microseconds(us));
}

// A WHERE clause built from optional filters. Each "?" of a condition binds
// the condition's value as the next $N.
class Filter {
 public:
  void Add(std::string_view condition, Param value) {
    sql_ += sql_.empty() ? " WHERE " : " AND ";
    for (char ch : condition) {
      if (ch != '?') {
        sql_ += ch;
        continue;
      }
      params_.push_back(value);
      sql_ += "$" + std::to_string(params_.size());
    }
  }
  void AddIf(bool when, std::string_view condition, Param value) {
    if (when) Add(condition, value);
  }
  // `column` within [range.from, range.to), each end when set.
  void AddRange(const std::string& column, const TimeRange& range) {
    if (range.from) Add(column + " >= lens_ts(?)", Us(*range.from));
    if (range.to) Add(column + " < lens_ts(?)", Us(*range.to));
  }
  const std::string& sql() const { return sql_; }
  std::vector<Param>& params() { return params_; }
  // " LIMIT $a OFFSET $b" for `page`, appending its two parameters.
  std::string Limit(const PageRequest& page) {
    params_.push_back(int64_t{page.page_size});
    params_.push_back(int64_t{page.page_size} * (page.page_num - 1));
    return " LIMIT $" + std::to_string(params_.size() - 1) + " OFFSET $" +
           std::to_string(params_.size());
  }

 private:
  std::string sql_;
  std::vector<Param> params_;
};

// Upserts `rows` in one write transaction (see UpsertRows).
Status WriteRows(Database& db, const UpsertSpec& spec,
                 std::span<const std::vector<Param>> rows);

// Runs one read statement in a read transaction and returns its rows.
StatusOr<Rows> Query(Database& db, const std::string& sql,
                     std::span<const Param> params);

// Runs "SELECT count(*) FROM <from_where>" and "SELECT <columns> FROM
// <from_where> ORDER BY <order> LIMIT/OFFSET" in one read transaction.
StatusOr<Rows> ReadPage(Database& db, const std::string& from_where,
                        const std::string& columns, const std::string& order,
                        const PageRequest& page, Filter filter, int64_t* total);

inline Param OptUs(const std::optional<Timestamp>& t) {
  return t ? Param(Us(*t)) : Param();
}
// A double for a numeric column: NULL when not finite (see docs).
inline Param Finite(std::optional<double> v) {
  return v && std::isfinite(*v) ? Param(*v) : Param();
}

}  // namespace lens::store

#endif  // LENS_STORE_TEXT_H_
