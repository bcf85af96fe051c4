#include "core/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/text.h"

namespace lens {
namespace {

constexpr char kHex[] = "0123456789abcdef";

bool NeedsRepair(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return c == '\0' || static_cast<unsigned char>(c) >= 0x80;
  });
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  // Valid UTF-8 only: invalid sequences and NUL become U+FFFD (a JSON reader
  // rejects the first; PostgreSQL's jsonb rejects "\u0000").
  std::string valid;
  if (NeedsRepair(s) && (s.find('\0') != std::string_view::npos ||
                         FirstInvalidUtf8(s) != std::string_view::npos)) {
    valid = ValidUtf8(s);
    s = valid;
  }
  out->reserve(out->size() + s.size() + 2);
  out->push_back('"');
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
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

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendJsonString(key, out_);
  out_->push_back(':');
  after_key_ = true;
}

void JsonWriter::String(std::string_view s) {
  if (!after_key_ && !open_.empty() && open_.back().object) {
    Key(s);
    return;
  }
  BeforeValue();
  AppendJsonString(s, out_);
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
