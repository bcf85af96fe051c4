#include "core/json.h"

#include <array>
#include <charconv>
#include <cmath>

#include "core/text.h"

namespace lens {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// What each byte needs inside a JSON string: 1 copied as is, 0 escaped,
// 2 (NUL, or not ASCII) the rest of the string checked once for UTF-8.
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    t[c] = c >= 0x80 ? 2 : (c >= 0x20 && c != '"' && c != '\\') ? 1 : 0;
  }
  t[0] = 2;
  return t;
}();

// The text between the quotes, in one pass. `checked`: `s` is known to be
// valid UTF-8 without NUL.
void AppendBody(std::string_view s, bool checked, std::string* out) {
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const uint8_t k = kByteClass[c];
    if (k == 1) continue;
    if (k == 2 && c != 0 && checked) continue;
    if (k == 2 && !checked) {
      // Valid UTF-8 only: invalid sequences and NUL become U+FFFD (a JSON
      // reader rejects the first; PostgreSQL's jsonb rejects "\u0000").
      // Everything before `i` is ASCII, so sequences start at `i`.
      const std::string_view rest = s.substr(i);
      if (rest.find('\0') == std::string_view::npos &&
          FirstInvalidUtf8(rest) == std::string_view::npos) {
        checked = true;
        if (c != 0) continue;
      } else {
        out->append(s.data() + run, i - run);
        AppendBody(ValidUtf8(rest), true, out);
        return;
      }
    }
    out->append(s.data() + run, i - run);
    run = i + 1;
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
      default: {
        const char esc[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
        out->append(esc, sizeof(esc));
      }
    }
  }
  out->append(s.data() + run, s.size() - run);
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  AppendBody(s, false, out);
  out->push_back('"');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (open_.empty()) return;
  if (open_.back().has_value) {
    out_->push_back(',');
  } else {
    open_.back().has_value = true;
  }
}

void JsonWriter::OpenContainer(char c) {
  BeforeValue();
  out_->push_back(c);
  open_.push_back({.object = c == '{', .has_value = false});
}

void JsonWriter::CloseContainer(char c) {
  out_->push_back(c);
  if (!open_.empty()) open_.pop_back();
  after_key_ = false;
}

void JsonWriter::Quoted(std::string_view s) {
  out_->push_back('"');
  AppendBody(s, options_.verbatim_strings, out_);
  out_->push_back('"');
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  Quoted(key);
  out_->push_back(':');
  after_key_ = true;
}

void JsonWriter::String(std::string_view s) {
  if (!after_key_ && !open_.empty() && open_.back().object) {
    Key(s);
    return;
  }
  BeforeValue();
  Quoted(s);
}

void JsonWriter::Null() {
  BeforeValue();
  out_->append("null");
}

void JsonWriter::Bool(bool b) {
  BeforeValue();
  out_->append(b ? "true" : "false");
}

void JsonWriter::Int64(int64_t v) {
  BeforeValue();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out_->append(buf, r.ptr);
}

void JsonWriter::Uint64(uint64_t v) {
  BeforeValue();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out_->append(buf, r.ptr);
}

void JsonWriter::Double(double v) {
  BeforeValue();
  if (std::isfinite(v)) {
    AppendDouble(v, NonFinite::kJsonString, out_);
  } else if (options_.non_finite_as_strings) {
    AppendDouble(v, NonFinite::kJsonString, out_);
  } else {
    out_->append("null");
  }
}

void JsonWriter::RawValue(std::string_view json) {
  BeforeValue();
  out_->append(json);
}

std::string JsonWriter::Take() {
  std::string text = std::move(*out_);
  Reset();
  return text;
}

void JsonWriter::Reset() {
  out_->clear();
  open_.clear();
  after_key_ = false;
}

}  // namespace lens
