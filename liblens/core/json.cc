#include "core/json.h"

#include <algorithm>
#include <cstdio>

#include "core/text.h"

namespace lens {

void AppendJsonString(std::string_view s, std::string* out) {
  // Valid UTF-8 only: invalid sequences and NUL become U+FFFD (a JSON reader
  // rejects the first; PostgreSQL's jsonb rejects "\u0000").
  std::string valid;
  if (s.find('\0') != std::string_view::npos ||
      std::any_of(s.begin(), s.end(), [](char c) {
        return static_cast<unsigned char>(c) >= 0x80;
      })) {
    valid = ValidUtf8(s);
    s = valid;
  }
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          out->append(buf);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

}  // namespace lens
