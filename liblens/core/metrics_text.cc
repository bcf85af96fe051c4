// Text-format pieces of the exposition format 0.0.4: name rules, escaping,
// number formatting and bucket helpers. Reference: prometheus/docs
// content/docs/instrumenting/exposition_formats.md
#include <charconv>
#include <cmath>

#include "core/text.h"
#include "lens/metrics.h"

namespace lens {
namespace {

bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Length of the UTF-8 sequence starting at s[i], or 0 if invalid (overlongs,
// surrogates and code points above U+10FFFF are invalid, as in Go's
// utf8.ValidString).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  }
  return len;
}

}  // namespace

Status ValidateMetricName(std::string_view name) {
  bool ok =
      !name.empty() && (IsAlpha(name[0]) || name[0] == '_' || name[0] == ':');
  for (size_t i = 1; ok && i < name.size(); ++i) {
    const char c = name[i];
    ok = IsAlpha(c) || IsDigit(c) || c == '_' || c == ':';
  }
  if (!ok) {
    return InvalidArgumentError("invalid metric name \"" + std::string(name) +
                                "\" (want [a-zA-Z_:][a-zA-Z0-9_:]*)");
  }
  return OkStatus();
}

Status ValidateLabelName(std::string_view name) {
  bool ok = !name.empty() && (IsAlpha(name[0]) || name[0] == '_');
  for (size_t i = 1; ok && i < name.size(); ++i) {
    const char c = name[i];
    ok = IsAlpha(c) || IsDigit(c) || c == '_';
  }
  if (!ok) {
    return InvalidArgumentError("invalid label name \"" + std::string(name) +
                                "\" (want [a-zA-Z_][a-zA-Z0-9_]*)");
  }
  if (name.starts_with("__")) {
    return InvalidArgumentError("label name \"" + std::string(name) +
                                "\" is reserved (starts with __)");
  }
  return OkStatus();
}

Status ValidateLabelValue(std::string_view value) {
  for (size_t i = 0; i < value.size();) {
    const size_t len = Utf8SequenceLength(value, i);
    if (len == 0) {
      return InvalidArgumentError("label value is not valid UTF-8 (byte " +
                                  std::to_string(i) + ")");
    }
    i += len;
  }
  return OkStatus();
}

void AppendEscapedLabelValue(std::string_view value, std::string* out) {
  for (char c : value) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '"') {
      out->append("\\\"");
    } else if (c == '\n') {
      out->append("\\n");
    } else {
      out->push_back(c);
    }
  }
}

void AppendEscapedHelp(std::string_view help, std::string* out) {
  for (char c : help) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else {
      out->push_back(c);
    }
  }
}

void AppendMetricValue(double value, std::string* out) {
  AppendDouble(value, NonFinite::kPrometheus, out);
}

std::vector<double> DefaultBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

std::vector<double> LinearBuckets(double start, double width, int count) {
  std::vector<double> out;
  for (int i = 0; i < count; ++i) out.push_back(start + width * i);
  return out;
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> out;
  double bound = start;
  for (int i = 0; i < count; ++i, bound *= factor) out.push_back(bound);
  return out;
}

}  // namespace lens
