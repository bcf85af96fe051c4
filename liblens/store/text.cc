#include "store/text.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <cmath>
#include <cstdio>

#include "core/labels.h"

namespace lens::store {

Status CheckText(std::string_view table, std::string_view field, std::string* s,
                 size_t max_bytes) {
  if (s->size() > max_bytes) {
    return InvalidArgumentError(std::string(table) + "." + std::string(field) +
                                ": value of " + std::to_string(s->size()) +
                                " bytes exceeds the limit of " +
                                std::to_string(max_bytes));
  }
  SanitizeUtf8(s);
  return OkStatus();
}

Status CheckTexts(
    std::string_view table,
    std::initializer_list<std::pair<std::string_view, std::string*>> fields,
    size_t max_bytes) {
  for (const auto& [field, value] : fields) {
    LENS_RETURN_IF_ERROR(CheckText(table, field, value, max_bytes));
  }
  return OkStatus();
}

Status CheckKey(std::string_view table, std::string_view field,
                std::string* s) {
  if (s->empty()) {
    return InvalidArgumentError(std::string(table) + "." + std::string(field) +
                                ": must not be empty");
  }
  return CheckText(table, field, s, kMaxKeyBytes);
}

Status CheckJson(std::string_view table, std::string_view field, std::string* s,
                 size_t max_bytes) {
  if (s->empty()) *s = "{}";
  LENS_RETURN_IF_ERROR(CheckText(table, field, s, max_bytes));
  rapidjson::Document doc;
  doc.Parse(s->data(), s->size());
  const std::string where = std::string(table) + "." + std::string(field);
  if (doc.HasParseError()) {
    return InvalidArgumentError(
        where + ": not valid JSON at offset " +
        std::to_string(doc.GetErrorOffset()) + ": " +
        rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject() && !doc.IsArray()) {
    return InvalidArgumentError(where + ": must be a JSON object or array");
  }
  return OkStatus();
}

StatusOr<std::string> LabelsColumn(std::string_view table,
                                   const Labels& labels) {
  std::string out = LabelsToJson(labels);
  if (out.size() > kMaxLabelsBytes) {
    return InvalidArgumentError(
        std::string(table) + ".labels: value of " + std::to_string(out.size()) +
        " bytes exceeds the limit of " + std::to_string(kMaxLabelsBytes));
  }
  return out;
}

Labels ReadLabels(std::string_view json) {
  return LabelsFromJson(json).value_or(Labels());
}

Status CheckTime(std::string_view table, std::string_view field, Timestamp t) {
  if (t.time_since_epoch().count() <= 0) {
    return InvalidArgumentError(std::string(table) + "." + std::string(field) +
                                ": timestamp not set");
  }
  return OkStatus();
}

Status CheckTimes(std::string_view table, Timestamp* created,
                  Timestamp updated) {
  LENS_RETURN_IF_ERROR(CheckTime(table, "updated_at", updated));
  if (created->time_since_epoch().count() <= 0) *created = updated;
  return OkStatus();
}

std::string HexDigest64(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

StatusOr<std::string> OrderBy(std::string_view what, const Sort& sort,
                              std::initializer_list<SortKey> allowed) {
  const SortKey* chosen = allowed.begin();
  if (!sort.key.empty()) {
    chosen = nullptr;
    std::string keys;
    for (const SortKey& k : allowed) {
      if (k.key == sort.key) chosen = &k;
      keys += keys.empty() ? "" : ", ";
      keys += k.key;
    }
    if (!chosen) {
      return InvalidArgumentError(std::string(what) + ": unknown sort key '" +
                                  sort.key.substr(0, 64) +
                                  "' (allowed: " + keys + ")");
    }
  }
  const bool desc =
      sort.key.empty() ? chosen->default_descending : sort.descending;
  // "run, iteration" sorts every column the same way.
  std::string out;
  std::string_view cols = chosen->sql;
  while (!cols.empty()) {
    const size_t comma = cols.find(',');
    std::string_view col = cols.substr(0, comma);
    while (!col.empty() && col.front() == ' ') col.remove_prefix(1);
    if (!out.empty()) out += ", ";
    out.append(col).append(desc ? " DESC" : " ASC");
    cols = comma == std::string_view::npos ? "" : cols.substr(comma + 1);
  }
  return out;
}

Status CheckPage(const PageRequest& page) {
  if (page.page_num < 1) {
    return InvalidArgumentError("pageNum must be >= 1, got " +
                                std::to_string(page.page_num));
  }
  if (page.page_size < 1 || page.page_size > 1000) {
    return InvalidArgumentError("pageSize must be 1..1000, got " +
                                std::to_string(page.page_size));
  }
  return OkStatus();
}

Status WriteRows(Database& db, const UpsertSpec& spec,
                 std::span<const std::vector<Param>> rows) {
  return db.Write([&](Conn& c) { return UpsertRows(c, spec, rows).status(); });
}

StatusOr<Rows> Query(Database& db, const std::string& sql,
                     std::span<const Param> params) {
  Rows rows;
  LENS_RETURN_IF_ERROR(
      db.Read([&](Conn& c) { return c.Execute(sql, params, &rows); }));
  return rows;
}

StatusOr<Rows> ReadPage(Database& db, const std::string& from_where,
                        const std::string& columns, const std::string& order,
                        const PageRequest& page, Filter filter,
                        int64_t* total) {
  const std::vector<Param> count_params = filter.params();
  const std::string page_sql = "SELECT " + columns + " FROM " + from_where +
                               " ORDER BY " + order + filter.Limit(page);
  Rows rows;
  LENS_RETURN_IF_ERROR(db.Read([&](Conn& c) -> Status {
    Rows count;
    LENS_RETURN_IF_ERROR(
        c.Execute("SELECT count(*) FROM " + from_where, count_params, &count));
    *total = count.Int(0, 0);
    return c.Execute(page_sql, filter.params(), &rows);
  }));
  return rows;
}

}  // namespace lens::store
