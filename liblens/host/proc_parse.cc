#include "host/proc_parse.h"

#include <charconv>
#include <set>

namespace lens::host {
namespace {

std::string_view Trim(std::string_view s) {
  const std::string_view kSpace = " \t\r\n";
  size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  size_t end = s.find_last_not_of(kSpace);
  return s.substr(begin, end - begin + 1);
}

// Calls `fn(line)` for every line of `text` (without the newline).
template <typename Fn>
void ForEachLine(std::string_view text, Fn fn) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    fn(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// "key\t\t: value" -> {"key", "value"}; false without a colon.
bool SplitKeyValue(std::string_view line, std::string_view* key,
                   std::string_view* value) {
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  *key = Trim(line.substr(0, colon));
  *value = Trim(line.substr(colon + 1));
  return true;
}

std::optional<uint64_t> ParseUint(std::string_view s) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
    return std::nullopt;
  }
  return v;
}

// "16316244 kB" -> bytes; a bare number is taken as is.
std::optional<uint64_t> ParseMemValue(std::string_view value) {
  uint64_t scale = 1;
  if (value.size() > 3 && value.substr(value.size() - 3) == " kB") {
    value = Trim(value.substr(0, value.size() - 3));
    scale = 1024;
  }
  std::optional<uint64_t> number = ParseUint(value);
  if (!number || *number > UINT64_MAX / scale) return std::nullopt;
  return *number * scale;
}

// The value of a KEY= line per os-release(5), quotes and escapes resolved.
std::string UnquoteOsReleaseValue(std::string_view v) {
  if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') {
    return std::string(v.substr(1, v.size() - 2));
  }
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
    v = v.substr(1, v.size() - 2);
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == '\\' && i + 1 < v.size()) {
        char next = v[i + 1];
        if (next == '"' || next == '\\' || next == '$' || next == '`') {
          out += next;
          ++i;
          continue;
        }
      }
      out += v[i];
    }
    return out;
  }
  return std::string(v);
}

bool IsVersionToken(std::string_view token) {
  if (token.empty() || token.front() < '0' || token.front() > '9') {
    return false;
  }
  bool dot = false;
  for (char c : token) {
    if (c == '.') {
      dot = true;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dot && token.back() != '.';
}

}  // namespace

CpuInfo ParseCpuInfo(std::string_view text) {
  CpuInfo info;
  std::set<std::string_view> sockets;
  ForEachLine(text, [&](std::string_view line) {
    std::string_view key, value;
    if (!SplitKeyValue(line, &key, &value)) return;
    if (key == "processor") {
      ++info.logical_cpus;
    } else if (key == "model name" && info.model.empty()) {
      info.model = std::string(value);
    } else if (key == "physical id") {
      sockets.insert(value);
    }
  });
  if (!sockets.empty()) info.sockets = static_cast<int>(sockets.size());
  return info;
}

MemInfo ParseMemInfo(std::string_view text) {
  MemInfo info;
  ForEachLine(text, [&](std::string_view line) {
    std::string_view key, value;
    if (!SplitKeyValue(line, &key, &value)) return;
    if (key == "MemTotal") info.total_bytes = ParseMemValue(value);
    if (key == "MemAvailable") info.available_bytes = ParseMemValue(value);
  });
  return info;
}

std::optional<double> ParseUptime(std::string_view text) {
  text = Trim(text);
  double seconds = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(),
                                   seconds, std::chars_format::fixed);
  if (ec != std::errc() || ptr == text.data() || seconds < 0) {
    return std::nullopt;
  }
  if (ptr != text.data() + text.size() && *ptr != ' ') return std::nullopt;
  return seconds;
}

std::map<std::string, std::string> ParseOsRelease(std::string_view text) {
  std::map<std::string, std::string> fields;
  ForEachLine(text, [&](std::string_view line) {
    line = Trim(line);
    if (line.empty() || line.front() == '#') return;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) return;
    fields[std::string(line.substr(0, eq))] =
        UnquoteOsReleaseValue(line.substr(eq + 1));
  });
  return fields;
}

std::string ParseNvidiaDriverVersion(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  constexpr std::string_view kPrefix = "NVRM version:";
  if (line.substr(0, kPrefix.size()) != kPrefix) return "";
  line.remove_prefix(kPrefix.size());
  // The first dotted number after the prefix; "x86_64" and the build date
  // never look like one.
  while (!line.empty()) {
    size_t begin = line.find_first_not_of(" \t");
    if (begin == std::string_view::npos) break;
    line.remove_prefix(begin);
    size_t end = line.find_first_of(" \t");
    std::string_view token = line.substr(0, end);
    if (IsVersionToken(token)) return std::string(token);
    if (end == std::string_view::npos) break;
    line.remove_prefix(end);
  }
  return "";
}

}  // namespace lens::host
