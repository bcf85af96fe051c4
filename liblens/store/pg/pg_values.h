// Statement parameters and results as libpq text (pg_conn.h says how each
// type is written).
#ifndef LENS_STORE_PG_PG_VALUES_H_
#define LENS_STORE_PG_PG_VALUES_H_

#include <pqxx/pqxx>
#include <string>

#include "store/db.h"

namespace lens::store {

// A parameter as libpq text, or NULL. False when a string holds a NUL byte
// (libpq would cut it there: silent data loss).
bool ToText(const Param& p, std::string* out, bool* is_null);
// Every cell as its text (std::string), NULL as monostate.
Rows ToRows(const pqxx::result& r);

}  // namespace lens::store

#endif  // LENS_STORE_PG_PG_VALUES_H_
