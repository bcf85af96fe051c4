#include "store/feed.h"

namespace lens::store {

StatusOr<Rows> ReadWrittenSince(Conn& c, std::string_view table,
                                const std::string& columns,
                                std::string_view order, int64_t since,
                                size_t limit, int64_t* through) {
  const std::string t(table);
  if (limit == 0) {
    return InvalidArgumentError(t + ": the change feed's limit must be >= 1");
  }
  // The write time of the limit-th row after `since` bounds the page; rows
  // written at `since` itself do not count, so reading again from a page's
  // `through` always moves on, however many rows one transaction wrote.
  Rows bound;
  const Param b[] = {since, static_cast<int64_t>(limit - 1)};
  LENS_RETURN_IF_ERROR(c.Execute("SELECT written_us FROM " + t +
                                     " WHERE written_us > $1 ORDER BY "
                                     "written_us LIMIT 1 OFFSET $2",
                                 b, &bound));
  std::string sql = "SELECT " + columns + ", written_us FROM " + t +
                    " WHERE written_us >= $1";
  std::vector<Param> p = {since};
  if (!bound.empty()) {
    sql += " AND written_us <= $2";
    p.push_back(bound.Int(0, 0));
  }
  sql += " ORDER BY written_us, " + std::string(order);
  Rows rows;
  LENS_RETURN_IF_ERROR(c.Execute(sql, p, &rows));
  *through =
      rows.empty() ? since : rows.Int(rows.size() - 1, rows.columns() - 1);
  return rows;
}

}  // namespace lens::store
