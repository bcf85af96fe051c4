// Where a config error's value came from: a whole configuration's Validate
// message named after the override (flag or environment variable) that set
// the key it is about, else the file.
#include <cctype>
#include <string>
#include <string_view>

#include "core/config_decode.h"

namespace lens::config {
namespace {

// Where `text` first names `key` as a word of its own ("dockerSocket must",
// not "dockerSocketPath"); npos when it does not.
size_t FindKey(std::string_view text, std::string_view key) {
  const auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  };
  for (size_t at = text.find(key); at != std::string_view::npos;
       at = text.find(key, at + 1)) {
    const size_t end = at + key.size();
    if ((at == 0 || !word(text[at - 1])) &&
        (end == text.size() || !word(text[end]))) {
      return at;
    }
  }
  return std::string_view::npos;
}

// A rule across keys of `section` ("dockerSocket must not be empty while
// ..."): the variable or flag that set the key the rule names first, or
// null.
const std::string* OriginOfRule(const Ctx& ctx, std::string_view section,
                                std::string_view rule) {
  const std::string* origin = nullptr;
  size_t first = std::string_view::npos;
  for (const auto& [key_path, key_origin] : ctx.env_origin) {
    const size_t dot = key_path.find('.');
    if (dot == std::string::npos ||
        std::string_view(key_path).substr(0, dot) != section) {
      continue;
    }
    const size_t at = FindKey(rule, std::string_view(key_path).substr(dot + 1));
    if (at < first) {
      first = at;
      origin = &key_origin;
    }
  }
  return origin;
}

}  // namespace

Status NameOrigin(Status st, const Ctx& ctx) {
  if (st.ok()) return st;
  const std::string& m = st.message();
  const size_t a = m.find(": ");
  const size_t b = a == std::string::npos ? a : m.find(": ", a + 2);
  if (b != std::string::npos) {
    const std::string path = m.substr(0, a) + "." + m.substr(a + 2, b - a - 2);
    if (auto it = ctx.env_origin.find(path); it != ctx.env_origin.end()) {
      return Status(st.code(),
                    it->second + ": " + path + ": " + m.substr(b + 2));
    }
  }
  if (a != std::string::npos) {
    if (auto it = ctx.env_origin.find(m.substr(0, a));
        it != ctx.env_origin.end()) {
      return Status(st.code(), it->second + ": " + m);
    }
    const std::string* origin = OriginOfRule(ctx, std::string_view(m.data(), a),
                                             std::string_view(m).substr(a + 2));
    // Without a file every key came from a default or an override; with
    // one, the file may have set the key too: both are named.
    if (origin && ctx.source == kNoFile) {
      return Status(st.code(), *origin + ": " + m);
    }
    if (origin) {
      return Status(st.code(), ctx.source + ": " + m + " (" + *origin + ")");
    }
  }
  return st.WithContext(ctx.source);
}

}  // namespace lens::config
