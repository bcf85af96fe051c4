// Small JSON writing helpers shared by every Lens component that emits JSON by
// hand (log lines, training records, CLI output).
#ifndef LENS_CORE_JSON_H_
#define LENS_CORE_JSON_H_

#include <string>
#include <string_view>

namespace lens {

// Appends `s` as a quoted JSON string: '"' and '\' escaped, \n \r \t by name,
// other control bytes as \u00XX. Valid UTF-8 passes through; invalid
// sequences and NUL bytes become U+FFFD, so the output is always valid JSON
// (and valid for PostgreSQL's jsonb). Thread-safe.
void AppendJsonString(std::string_view s, std::string* out);

}  // namespace lens

#endif  // LENS_CORE_JSON_H_
