#include "training/line.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cstring>

#include "training/numbers.h"

namespace lens::training {
namespace {

// Days since 1970-01-01 of a civil date (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!IsDigit(s[i])) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

// Length of an ANSI sequence at line[i] ('\x1b' or a lost-ESC '['), 0 when
// none.
size_t AnsiLength(std::string_view line, size_t i) {
  size_t j = i;
  bool esc = line[j] == '\x1b';
  if (esc) {
    ++j;
    if (j >= line.size() || line[j] != '[') return 1;  // a lone ESC: drop it
  }
  ++j;  // '['
  size_t params = j;
  while (j < line.size() && (IsDigit(line[j]) || line[j] == ';')) ++j;
  if (j >= line.size()) return 0;
  if (esc) return (line[j] >= '@' && line[j] <= '~') ? j + 1 - i : 0;
  // Without ESC only colour codes with at least one digit count ("[0m",
  // "[1;36m").
  return (line[j] == 'm' && j > params) ? j + 1 - i : 0;
}

}  // namespace

std::string_view StripAnsi(std::string_view line, std::string* out) {
  // Jump between candidate bytes with memchr; most lines have few '[' and no
  // ESC.
  const char* const begin = line.data();
  const char* const end = begin + line.size();
  auto next = [end](const char* from, char c) {
    const void* p = std::memchr(from, c, static_cast<size_t>(end - from));
    return p == nullptr ? end : static_cast<const char*>(p);
  };
  const char* esc = next(begin, '\x1b');
  const char* bracket = next(begin, '[');
  const char* copied = begin;
  bool changed = false;
  while (true) {
    const char* at = std::min(esc, bracket);
    if (at == end) break;
    const size_t i = static_cast<size_t>(at - begin);
    const size_t n = AnsiLength(line, i);
    const char* resume = at + (n > 0 ? n : 1);
    if (n > 0) {
      if (!changed) out->clear();
      changed = true;
      out->append(copied, at);
      copied = resume;
    }
    if (esc < resume) esc = next(resume, '\x1b');
    if (bracket < resume) bracket = next(resume, '[');
  }
  if (!changed) return line;
  out->append(copied, end);
  return *out;
}

std::optional<double> ParseTimestamp(std::string_view s, size_t* consumed) {
  int y, mo, d, h, mi, sec;
  size_t i = 0;
  if (!Digits(s, 0, 4, &y)) return std::nullopt;
  if (s.size() > 4 && s[4] == '-') {
    if (!Digits(s, 5, 2, &mo) || s.size() < 8 || s[7] != '-' ||
        !Digits(s, 8, 2, &d)) {
      return std::nullopt;
    }
    i = 10;
  } else {
    if (!Digits(s, 4, 2, &mo) || !Digits(s, 6, 2, &d)) return std::nullopt;
    i = 8;
  }
  if (i >= s.size() || (s[i] != 'T' && s[i] != ' ')) return std::nullopt;
  ++i;
  if (!Digits(s, i, 2, &h) || i + 2 >= s.size() || s[i + 2] != ':' ||
      !Digits(s, i + 3, 2, &mi) || i + 5 >= s.size() || s[i + 5] != ':' ||
      !Digits(s, i + 6, 2, &sec)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
    return std::nullopt;
  i += 8;
  double frac = 0;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    double scale = 0.1;
    ++i;
    while (i < s.size() && IsDigit(s[i])) {
      frac += (s[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
  }
  int64_t offset_s = 0;
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else if (i + 5 < s.size() + 0 && (s[i] == '+' || s[i] == '-') &&
             IsDigit(s[i + 1])) {
    int oh, om;
    if (Digits(s, i + 1, 2, &oh) && s[i + 3] == ':' &&
        Digits(s, i + 4, 2, &om)) {
      offset_s = (oh * 3600 + om * 60) * (s[i] == '+' ? 1 : -1);
      i += 6;
    }
  }
  *consumed = i;
  const int64_t days =
      DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return static_cast<double>(days * 86400 + h * 3600 + mi * 60 + sec -
                             offset_s) +
         frac;
}

bool ParseCriLine(std::string_view line, CriLine* out) {
  size_t used = 0;
  // CRI times are RFC3339Nano with a 'T' and a zone.
  if (line.size() < 32 || line[10] != 'T') return false;
  std::optional<double> ts = ParseTimestamp(line, &used);
  if (!ts || used >= line.size() || line[used] != ' ') return false;
  std::string_view rest = line.substr(used + 1);
  if (rest.substr(0, 7) == "stdout ") {
    out->is_stderr = false;
  } else if (rest.substr(0, 7) == "stderr ") {
    out->is_stderr = true;
  } else {
    return false;
  }
  rest.remove_prefix(7);
  if (rest.empty() || (rest[0] != 'F' && rest[0] != 'P')) return false;
  out->partial = rest[0] == 'P';
  rest.remove_prefix(1);
  if (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
  out->timestamp_s = *ts;
  out->message = rest;
  return true;
}

bool ParseJsonRecord(std::string_view line, std::string* message,
                     std::optional<double>* timestamp_s, CriLine* cri) {
  line = TrimBlanks(line);
  if (line.size() < 2 || line.front() != '{' || line[1] != '"') return false;
  rapidjson::Document doc;
  doc.Parse(line.data(), line.size());
  if (doc.HasParseError() || !doc.IsObject()) return false;
  const rapidjson::Value* text = nullptr;
  for (const char* key : {"log", "message", "msg"}) {
    auto it = doc.FindMember(key);
    if (it != doc.MemberEnd() && it->value.IsString()) {
      text = &it->value;
      break;
    }
  }
  if (text == nullptr) return false;
  message->assign(text->GetString(), text->GetStringLength());
  if (cri != nullptr) {
    auto p = doc.FindMember("_p");
    cri->partial = p != doc.MemberEnd() && p->value.IsString() &&
                   std::string_view(p->value.GetString()) == "P";
    auto stream = doc.FindMember("stream");
    cri->is_stderr = stream != doc.MemberEnd() && stream->value.IsString() &&
                     std::string_view(stream->value.GetString()) == "stderr";
    if (cri->partial)
      return true;  // keep the text exactly as it is: it continues
  }
  while (!message->empty() &&
         (message->back() == '\n' || message->back() == '\r')) {
    message->pop_back();
  }
  auto date = doc.FindMember("date");
  if (date != doc.MemberEnd() && date->value.IsNumber()) {
    *timestamp_s = date->value.GetDouble();
  } else {
    for (const char* key : {"time", "@timestamp", "timestamp"}) {
      auto it = doc.FindMember(key);
      if (it == doc.MemberEnd() || !it->value.IsString()) continue;
      size_t used = 0;
      *timestamp_s = ParseTimestamp(it->value.GetString(), &used);
      if (*timestamp_s) break;
    }
  }
  return true;
}

void ParsePrefix(std::string_view line, LinePrefix* out) {
  std::string_view head = line.substr(0, 96);
  // Timestamp: the first "20yy" that starts a date in the head.
  for (size_t i = 0; i + 17 <= head.size(); ++i) {
    if (line[i] == '2' && line[i + 1] == '0' &&
        (i == 0 || !IsDigit(line[i - 1]))) {
      size_t used = 0;
      if (auto ts = ParseTimestamp(line.substr(i), &used)) {
        out->timestamp_s = ts;
        break;
      }
    }
  }
  size_t r = head.find("[rank-");
  if (r != std::string_view::npos) {
    long long rank = 0, world = 0;
    std::string_view rest = head.substr(r + 6);
    size_t n = ParseInt(rest, &rank);
    if (n > 0 && n < rest.size() && rest[n] == '/' &&
        ParseInt(rest.substr(n + 1), &world) > 0) {
      out->rank = static_cast<int32_t>(rank);
      out->world_size = static_cast<int32_t>(world);
      out->primus = true;
      return;
    }
  }
  r = head.find("[Rank ");
  if (r != std::string_view::npos) {
    long long rank = 0;
    if (ParseInt(head.substr(r + 6), &rank) > 0)
      out->rank = static_cast<int32_t>(rank);
    return;
  }
  // srun --label / torchrun prefixes: "3: ..." at the start of the line.
  long long rank = 0;
  size_t n = ParseInt(head, &rank);
  if (n > 0 && n <= 5 && n + 1 < head.size() && head[n] == ':' &&
      head[n + 1] == ' ') {
    out->rank = static_cast<int32_t>(rank);
  }
}

}  // namespace lens::training
