#include "telemetry/log_decode.h"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "training/line.h"

namespace lens::telemetry {
namespace {

enum class Field : uint8_t {
  kOther,
  kDate,
  kLog,
  kMessage,
  kStream,
  kTime,
  kLogTag,
  kKubernetes,
  kPodName,
  kNamespace,
  kPodId,
  kContainer,
  kHost,
};

Field RecordField(std::string_view k) {
  if (k == "log") return Field::kLog;
  if (k == "date") return Field::kDate;
  if (k == "stream") return Field::kStream;
  if (k == "time") return Field::kTime;
  if (k == "logtag") return Field::kLogTag;
  if (k == "message") return Field::kMessage;
  if (k == "kubernetes") return Field::kKubernetes;
  return Field::kOther;
}

Field KubernetesField(std::string_view k) {
  if (k == "pod_name") return Field::kPodName;
  if (k == "namespace_name") return Field::kNamespace;
  if (k == "pod_id") return Field::kPodId;
  if (k == "container_name") return Field::kContainer;
  if (k == "host") return Field::kHost;
  return Field::kOther;
}

// Iterative: a body of a million '[' must not recurse a million deep.
constexpr unsigned kFlags =
    rapidjson::kParseInsituFlag | rapidjson::kParseNumbersAsStringsFlag |
    rapidjson::kParseStopWhenDoneFlag | rapidjson::kParseIterativeFlag;
// Deeper than any record fluent-bit sends (record, kubernetes map, labels).
constexpr int kMaxDepth = 32;

// Collects records from SAX events. `depth_` counts open containers; records
// are the objects at depth `record_depth_` (2 inside a json array, 1 on a
// line), their fields the values at that depth, and the kubernetes fields the
// values one deeper while the `kubernetes` map is open.
class Handler
    : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
 public:
  Handler(bool array_body, const LogDecodeLimits& limits,
          rapidjson::InsituStringStream* is, DecodedLogs* out)
      : record_depth_(array_body ? 2 : 1),
        limits_(limits),
        is_(is),
        out_(out) {}

  bool Default() { return Scalar(); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    if (!Scalar()) return false;
    if (depth_ == record_depth_ && field_ == Field::kDate) {
      record_.time_us = ParseLogDate(std::string_view(s, n), true);
    }
    return true;
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (!Scalar()) return false;
    std::string_view v(s, n);
    if (depth_ == record_depth_) {
      switch (field_) {
        case Field::kLog:
          SetMessage(v);
          has_log_ = true;
          break;
        case Field::kMessage:
          if (!has_log_) SetMessage(v);
          break;
        case Field::kDate:
          record_.time_us = ParseLogDate(v, false);
          break;
        case Field::kTime:
          record_.time_text = v;
          break;
        case Field::kStream:
          record_.is_stderr = v == "stderr";
          break;
        case Field::kLogTag:
          record_.partial = v == "P";
          break;
        default:
          break;
      }
    } else if (depth_ == record_depth_ + 1 && in_kubernetes_) {
      switch (field_) {
        case Field::kPodName:
          record_.pod_name = v;
          break;
        case Field::kNamespace:
          record_.namespace_name = v;
          break;
        case Field::kPodId:
          record_.pod_id = v;
          break;
        case Field::kContainer:
          record_.container_name = v;
          break;
        case Field::kHost:
          record_.host = v;
          break;
        default:
          break;
      }
    }
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (depth_ == record_depth_) {
      field_ = RecordField(std::string_view(s, n));
    } else if (depth_ == record_depth_ + 1 && in_kubernetes_) {
      field_ = KubernetesField(std::string_view(s, n));
    }
    return true;
  }
  bool StartObject() {
    if (depth_ == 0 && record_depth_ == 2) {
      return Fail(
          "a json body is an array of records, not an object (is the format "
          "json_lines?)");
    }
    if (depth_ == record_depth_ - 1) {
      record_ = LogRecord();
      has_log_ = false;
    } else if (depth_ == record_depth_ && field_ == Field::kKubernetes) {
      in_kubernetes_ = true;
      record_.has_kubernetes = true;
    }
    return Deeper();
  }
  bool EndObject(rapidjson::SizeType) {
    --depth_;
    if (depth_ == record_depth_) {
      in_kubernetes_ = false;
    } else if (depth_ == record_depth_ - 1) {
      return EndRecord();
    }
    return true;
  }
  bool StartArray() {
    if (depth_ == 0 && record_depth_ == 1) {
      return Fail(
          "a json_lines body holds one object per line, not an array (is the "
          "format json?)");
    }
    if (!Scalar()) return false;
    return Deeper();
  }
  bool EndArray(rapidjson::SizeType) {
    --depth_;
    return true;
  }

  const Status& status() const { return status_; }

 private:
  bool Deeper() {
    if (++depth_ > kMaxDepth) {
      return Fail("nested deeper than " + std::to_string(kMaxDepth) +
                  " levels");
    }
    return true;
  }
  // A value that is not an object where a record must be.
  bool Scalar() {
    if (depth_ != record_depth_ - 1) return true;
    return Fail("record " + std::to_string(out_->records.size() + 1) +
                " is not a JSON object");
  }
  bool Fail(std::string what, StatusCode code = StatusCode::kInvalidArgument) {
    status_ =
        Status(code, what + " (at byte " + std::to_string(is_->Tell()) + ")");
    return false;
  }
  void SetMessage(std::string_view v) {
    record_.has_message = true;
    record_.truncated = false;
    if (v.size() > limits_.max_message_bytes) {
      size_t cut = limits_.max_message_bytes;
      // Cut before a UTF-8 continuation byte, never inside a character.
      while (cut > 0 && (static_cast<unsigned char>(v[cut]) & 0xC0) == 0x80) {
        --cut;
      }
      v = v.substr(0, cut);
      record_.truncated = true;
    }
    record_.message = v;
  }
  bool EndRecord() {
    if (out_->records.size() >= limits_.max_records) {
      return Fail("more than " + std::to_string(limits_.max_records) +
                      " records in one request",
                  StatusCode::kResourceExhausted);
    }
    if (!record_.time_us && !record_.time_text.empty()) {
      record_.time_us = ParseLogDate(record_.time_text, false);
    }
    if (record_.truncated) ++out_->truncated;
    // A record with neither a line nor Kubernetes metadata is nothing to
    // keep (and `{}` by the million must not cost 136 bytes each).
    if (!record_.has_message && !record_.has_kubernetes) {
      ++out_->empty;
      return true;
    }
    out_->records.push_back(record_);
    return true;
  }

  const int record_depth_;
  const LogDecodeLimits& limits_;
  rapidjson::InsituStringStream* is_;
  DecodedLogs* out_;
  int depth_ = 0;
  Field field_ = Field::kOther;
  bool in_kubernetes_ = false;
  bool has_log_ = false;
  LogRecord record_;
  Status status_;
};

bool IsBlank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

void SkipBlanks(rapidjson::InsituStringStream& is) {
  while (IsBlank(is.Peek())) is.Take();
}

void AppendDigits(int64_t v, int width, std::string* out) {
  char buf[20];
  for (int i = width - 1; i >= 0; --i) {
    buf[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  out->append(buf, static_cast<size_t>(width));
}

// `text` with '\n' written as '\r'.
void AppendOneLine(std::string_view text, std::string* out) {
  while (true) {
    const void* nl = std::memchr(text.data(), '\n', text.size());
    if (nl == nullptr) break;
    const size_t n =
        static_cast<size_t>(static_cast<const char*>(nl) - text.data());
    out->append(text.data(), n);
    out->push_back('\r');
    text.remove_prefix(n + 1);
  }
  out->append(text);
}

// "YYYY-MM-DDTHH:MM:SS.f...", no blank: a time the CRI line splitter takes
// (training::ParseCriLine wants the fraction: a line of at least 32 bytes).
bool IsRfc3339(std::string_view t) {
  return t.size() >= 22 && t[4] == '-' && t[10] == 'T' && t[19] == '.' &&
         t.find(' ') == std::string_view::npos;
}

}  // namespace

std::optional<LogFormat> LogFormatFromName(std::string_view name) {
  if (name == "json") return LogFormat::kJson;
  if (name == "json_lines" || name == "json_stream") {
    return LogFormat::kJsonLines;
  }
  return std::nullopt;
}

std::optional<int64_t> ParseLogDate(std::string_view text, bool is_number) {
  if (!is_number) {
    size_t used = 0;
    std::optional<double> s = training::ParseTimestamp(text, &used);
    if (!s) return std::nullopt;
    // Exact for up to 6 fraction digits: the double is within 0.25 us.
    return std::llround(*s * 1e6);
  }
  size_t i = 0;
  int64_t whole = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (i >= 15) return std::nullopt;  // past the year 30000 in ms
    whole = whole * 10 + (text[i] - '0');
    ++i;
  }
  if (i == 0) return std::nullopt;  // negative or not a number
  if (i == text.size()) return i >= 13 ? whole * 1000 : whole * 1000000;
  int64_t frac = 0;
  if (text[i] == '.') {
    if (i >= 13) return std::nullopt;  // seconds past the year 30000
    ++i;
    int digits = 0;
    bool round_up = false;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      if (digits < 6) {
        frac = frac * 10 + (text[i] - '0');
      } else if (digits == 6) {
        round_up = text[i] >= '5';
      }
      ++digits;
    }
    for (; digits < 6; ++digits) frac *= 10;
    if (round_up) ++frac;
    if (i == text.size()) return whole * 1000000 + frac;
  }
  // An exponent: rare enough to go through strtod.
  const std::string copy(text);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !(v >= 0 && v < 1e12)) {
    return std::nullopt;
  }
  return std::llround(v * 1e6);
}

void AppendRfc3339Micros(int64_t time_us, std::string* out) {
  int64_t days = time_us / 86400000000;
  int64_t us = time_us % 86400000000;
  if (us < 0) {
    us += 86400000000;
    --days;
  }
  // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2);
  const int64_t secs = us / 1000000;
  AppendDigits(y, 4, out);
  out->push_back('-');
  AppendDigits(m, 2, out);
  out->push_back('-');
  AppendDigits(d, 2, out);
  out->push_back('T');
  AppendDigits(secs / 3600, 2, out);
  out->push_back(':');
  AppendDigits(secs / 60 % 60, 2, out);
  out->push_back(':');
  AppendDigits(secs % 60, 2, out);
  out->push_back('.');
  AppendDigits(us % 1000000, 6, out);
  out->push_back('Z');
}

void AppendCriLine(const LogRecord& record, int64_t fallback_us,
                   std::string* out) {
  std::string_view text = record.message;
  if (!record.partial) {
    while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    training::CriLine cri;
    if (IsRfc3339(text.substr(0, 22)) && training::ParseCriLine(text, &cri)) {
      AppendOneLine(text, out);
      out->push_back('\n');
      return;
    }
  }
  if (IsRfc3339(record.time_text)) {
    out->append(record.time_text);
  } else {
    AppendRfc3339Micros(record.time_us.value_or(fallback_us), out);
  }
  out->append(record.is_stderr ? " stderr " : " stdout ");
  out->append(record.partial ? "P " : "F ");
  AppendOneLine(text, out);
  out->push_back('\n');
}

Status DecodeFluentBitLogs(std::string_view body, LogFormat format,
                           const LogDecodeLimits& limits, DecodedLogs* out) {
  out->records.clear();
  out->truncated = 0;
  if (body.size() > limits.max_body_bytes) {
    return ResourceExhaustedError(
        "log request of " + std::to_string(body.size()) +
        " bytes is over the limit of " + std::to_string(limits.max_body_bytes));
  }
  out->buffer.assign(body);
  size_t start = 0;
  while (start < body.size() && IsBlank(body[start])) ++start;
  if (format == LogFormat::kAuto) {
    format = start < body.size() && body[start] == '[' ? LogFormat::kJson
                                                       : LogFormat::kJsonLines;
  }
  rapidjson::InsituStringStream is(out->buffer.data());
  Handler handler(format == LogFormat::kJson, limits, &is, out);
  rapidjson::Reader reader;
  bool first = true;
  while (true) {
    SkipBlanks(is);
    if (is.Tell() >= body.size()) break;
    if (is.Peek() == '\0') {
      out->records.clear();
      return InvalidArgumentError(
          "log request: NUL byte outside a string at "
          "byte " +
          std::to_string(is.Tell()));
    }
    if (format == LogFormat::kJson && !first) {
      out->records.clear();
      return InvalidArgumentError(
          "log request: unexpected data after the array of records at byte " +
          std::to_string(is.Tell()));
    }
    first = false;
    if (!reader.Parse<kFlags>(is, handler)) {
      out->records.clear();
      if (!handler.status().ok()) {
        return Status(handler.status().code(),
                      "log request: " + handler.status().message());
      }
      return InvalidArgumentError(
          std::string("log request: malformed JSON at byte ") +
          std::to_string(reader.GetErrorOffset()) + ": " +
          rapidjson::GetParseError_En(reader.GetParseErrorCode()));
    }
  }
  return OkStatus();
}

}  // namespace lens::telemetry
