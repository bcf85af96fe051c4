// Text-format pieces of the exposition format 0.0.4: name rules, escaping,
// number formatting and bucket helpers. Reference: prometheus/docs
// content/docs/instrumenting/exposition_formats.md
#include <charconv>
#include <cmath>

#include "core/metrics.h"
#include "core/text.h"

namespace lens {
namespace {

bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

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
  if (const size_t i = FirstInvalidUtf8(value); i != std::string_view::npos) {
    return InvalidArgumentError("label value is not valid UTF-8 (byte " +
                                std::to_string(i) + ")");
  }
  return OkStatus();
}

void AppendEscapedLabelValue(std::string_view value, std::string* out) {
  // Label values reach here from the outside world (pod names from a log
  // stream, ...): invalid UTF-8 or a NUL would make Prometheus refuse the
  // whole scrape, so they are written as U+FFFD.
  std::string sanitized;
  if (FirstInvalidUtf8(value) != std::string_view::npos ||
      value.find('\0') != std::string_view::npos) {
    sanitized = ValidUtf8(value);
    value = sanitized;
  }
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
