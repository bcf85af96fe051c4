// The text exposition format, one line at a time:
//   name{label="value",...} value [timestamp_ms]
// Label values escape \\, \" and \n.
#include "telemetry/exposition.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace lens::telemetry {
namespace {

bool NameChar(char c, bool first) {
  const bool alpha =
      (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
  return alpha || (!first && c >= '0' && c <= '9');
}

StatusOr<double> ParseValue(std::string_view text) {
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "+Inf" || text == "Inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (text == "-Inf") return -std::numeric_limits<double>::infinity();
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return InvalidArgumentError("bad value \"" + std::string(text) + "\"");
  }
  return v;
}

// Parses `line` into `sample`; the error says what is wrong.
Status ParseLine(std::string_view line, int64_t default_ms,
                 MetricSample* sample) {
  size_t i = 0;
  while (i < line.size() && NameChar(line[i], i == 0)) ++i;
  if (i == 0) return InvalidArgumentError("expected a metric name");
  sample->metric.assign(line.substr(0, i));
  sample->labels.clear();
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (true) {
      while (i < line.size() && line[i] == ' ') ++i;
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      const size_t name_at = i;
      while (i < line.size() && NameChar(line[i], i == name_at)) ++i;
      if (i == name_at || i + 1 >= line.size() || line[i] != '=' ||
          line[i + 1] != '"') {
        return InvalidArgumentError("bad label at column " +
                                    std::to_string(name_at + 1));
      }
      std::string name(line.substr(name_at, i - name_at));
      std::string value;
      for (i += 2; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] != '\\') {
          value.push_back(line[i]);
          continue;
        }
        if (++i >= line.size()) break;
        value.push_back(line[i] == 'n' ? '\n' : line[i]);
      }
      if (i >= line.size()) {
        return InvalidArgumentError("unterminated value of label " + name);
      }
      ++i;  // the closing quote
      if (!value.empty()) sample->labels.emplace_back(name, std::move(value));
      if (i < line.size() && line[i] == ',') {
        ++i;
      } else if (i >= line.size() || line[i] != '}') {
        return InvalidArgumentError("expected ',' or '}' after label " + name);
      }
    }
  }
  std::string_view rest = line.substr(i);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  const size_t space = rest.find(' ');
  LENS_ASSIGN_OR_RETURN(sample->value, ParseValue(rest.substr(0, space)));
  sample->timestamp_ms = default_ms;
  if (space != std::string_view::npos) {
    std::string_view ts = rest.substr(space + 1);
    while (!ts.empty() && ts.front() == ' ') ts.remove_prefix(1);
    auto [end, ec] =
        std::from_chars(ts.data(), ts.data() + ts.size(), sample->timestamp_ms);
    if (ec != std::errc() || end != ts.data() + ts.size()) {
      return InvalidArgumentError("bad timestamp \"" + std::string(ts) + "\"");
    }
  }
  return OkStatus();
}

bool Selected(std::string_view line, std::span<const std::string> prefixes) {
  if (prefixes.empty()) return true;
  for (const std::string& p : prefixes) {
    if (line.substr(0, p.size()) == p) return true;
  }
  return false;
}

}  // namespace

Status ParseExposition(std::string_view text, int64_t default_ms,
                       std::span<const std::string> prefixes,
                       std::vector<MetricSample>* out) {
  const size_t first = out->size();
  MetricSample sample;
  size_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    size_t eol = text.find('\n', at);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(at, eol - at);
    at = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#' || !Selected(line, prefixes)) {
      continue;
    }
    Status st = ParseLine(line, default_ms, &sample);
    if (!st.ok()) {
      out->resize(first);
      return InvalidArgumentError("line " + std::to_string(line_no) + ": " +
                                  st.message());
    }
    out->push_back(sample);
  }
  return OkStatus();
}

}  // namespace lens::telemetry
