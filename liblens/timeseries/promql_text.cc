#include "timeseries/promql_text.h"

namespace lens::timeseries {

void AppendPromQlString(std::string_view value, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (const char c : value) {
    switch (c) {
      case '\\':
        *out += "\\\\";
        continue;
      case '"':
        *out += "\\\"";
        continue;
      case '\n':
        *out += "\\n";
        continue;
      case '\r':
        *out += "\\r";
        continue;
      case '\t':
        *out += "\\t";
        continue;
      case '\a':
        *out += "\\a";
        continue;
      case '\b':
        *out += "\\b";
        continue;
      case '\f':
        *out += "\\f";
        continue;
      case '\v':
        *out += "\\v";
        continue;
      default:
        break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      *out += "\\x";
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 15]);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

std::string PromQlExpression(const RangeQuery& q) {
  std::string selector = q.metric;
  for (size_t i = 0; i < q.matchers.size(); ++i) {
    selector.push_back(i == 0 ? '{' : ',');
    selector += q.matchers[i].first;
    selector.push_back('=');
    AppendPromQlString(q.matchers[i].second, &selector);
  }
  if (!q.matchers.empty()) selector.push_back('}');
  switch (q.function) {
    case RangeFunction::kValue:
      return selector;
    case RangeFunction::kRate:
      return "rate(" + selector + "[" + PromQlDuration(q.step) + "])";
  }
  return selector;
}

std::string PromQlDuration(std::chrono::milliseconds d) {
  const int64_t ms = d.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

std::string PromQlSeconds(int64_t ms) {
  // Integer arithmetic: no rounding error however large the time.
  const bool negative = ms < 0;
  const uint64_t abs =
      negative ? 0 - static_cast<uint64_t>(ms) : static_cast<uint64_t>(ms);
  std::string out = negative ? "-" : "";
  out += std::to_string(abs / 1000);
  if (uint64_t frac = abs % 1000; frac != 0) {
    std::string digits = std::to_string(frac);
    digits.insert(0, 3 - digits.size(), '0');
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out;
}

}  // namespace lens::timeseries
