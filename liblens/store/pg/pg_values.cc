// Statement parameters and results as libpq text (pg_values.h).
#include "store/pg/pg_values.h"

#include "core/text.h"

namespace lens::store {

bool ToText(const Param& p, std::string* out, bool* is_null) {
  *is_null = false;
  if (auto* i = std::get_if<int64_t>(&p)) {
    *out = std::to_string(*i);
  } else if (auto* d = std::get_if<double>(&p)) {
    out->clear();
    AppendDouble(*d, NonFinite::kPostgres, out);
  } else if (auto* s = std::get_if<std::string_view>(&p)) {
    if (s->find('\0') != std::string_view::npos) return false;
    out->assign(*s);
  } else if (auto* b = std::get_if<bool>(&p)) {
    *out = *b ? "true" : "false";
  } else {
    *is_null = true;
  }
  return true;
}

Rows ToRows(const pqxx::result& r) {
  const size_t columns = static_cast<size_t>(r.columns());
  std::vector<Value> cells;
  cells.reserve(r.size() * columns);
  for (pqxx::result::size_type i = 0; i < r.size(); ++i) {
    const pqxx::row row = r[i];
    for (pqxx::row::size_type j = 0; j < row.size(); ++j) {
      const pqxx::field f = row[j];
      if (f.is_null()) {
        cells.emplace_back(std::monostate{});
      } else {
        cells.emplace_back(std::string(f.c_str(), f.size()));
      }
    }
  }
  return Rows(columns, std::move(cells));
}

}  // namespace lens::store
