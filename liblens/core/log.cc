#include "lens/log.h"

#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <mutex>

#include "core/json.h"
#include "core/text.h"

namespace lens {
namespace {

// The one process-wide logger. `level` is read without the lock on every
// LENS_LOG; the rest is only touched under `mu`.
struct Logger {
  std::atomic<int> level{static_cast<int>(LogLevel::kInfo)};
  std::mutex mu;
  LogOptions options;  // GUARDED_BY(mu)
};

Logger& GetLogger() {
  // Leaked on purpose: messages may be logged from static destructors of other
  // objects.
  static Logger* logger = new Logger();
  return *logger;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Text format: control characters are escaped so a message stays on one line.
void AppendTextEscaped(std::string_view s, std::string* out) {
  for (char c : s) {
    if (c == '\n') {
      out->append("\\n");
    } else if (c == '\r') {
      out->append("\\r");
    } else if (c == '\t') {
      out->append("\\t");
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned>(c));
      out->append(buf);
    } else {
      out->push_back(c);
    }
  }
}

bool NeedsQuotes(std::string_view s) {
  if (s.empty()) return true;
  for (char c : s) {
    if (c == ' ' || c == '"' || c == '=' || c == '\\' ||
        static_cast<unsigned char>(c) < 0x20) {
      return true;
    }
  }
  return false;
}

std::string_view UpperLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarn:
      return "WARN";
    case LogLevel::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

}  // namespace

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "unknown";
}

std::string_view LogFormatName(LogFormat format) {
  return format == LogFormat::kJson ? "json" : "text";
}

StatusOr<LogLevel> ParseLogLevel(std::string_view name) {
  const std::string n = Lower(name);
  if (n == "debug") return LogLevel::kDebug;
  if (n == "info") return LogLevel::kInfo;
  if (n == "warn" || n == "warning") return LogLevel::kWarn;
  if (n == "error") return LogLevel::kError;
  return InvalidArgumentError("unknown log level \"" + std::string(name) +
                              "\" (want one of: debug, info, warn, error)");
}

StatusOr<LogFormat> ParseLogFormat(std::string_view name) {
  const std::string n = Lower(name);
  if (n == "text") return LogFormat::kText;
  if (n == "json") return LogFormat::kJson;
  return InvalidArgumentError("unknown log format \"" + std::string(name) +
                              "\" (want one of: text, json)");
}

void ConfigureLogging(LogOptions options) {
  Logger& logger = GetLogger();
  std::lock_guard<std::mutex> lock(logger.mu);
  logger.level.store(static_cast<int>(options.level),
                     std::memory_order_relaxed);
  logger.options = std::move(options);
}

bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) >=
         GetLogger().level.load(std::memory_order_relaxed);
}

std::string FormatLogTimestamp(std::chrono::system_clock::time_point time) {
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  using std::chrono::seconds;
  const auto since_epoch = duration_cast<microseconds>(time.time_since_epoch());
  // Floor division so times before 1970 still get a 0..999999 fraction.
  auto secs = duration_cast<seconds>(since_epoch);
  if (secs > since_epoch) secs -= seconds(1);
  const auto micros = (since_epoch - secs).count();
  const std::time_t t = static_cast<std::time_t>(secs.count());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<long long>(micros));
  return buf;
}

LogMessage::LogMessage(LogLevel level) : level_(level) {}

LogMessage& LogMessage::Field(std::string_view key, std::string_view value) {
  fields_.push_back({std::string(key), std::string(value), Kind::kString});
  return *this;
}

LogMessage& LogMessage::Field(std::string_view key, bool value) {
  fields_.push_back({std::string(key), value ? "true" : "false", Kind::kRaw});
  return *this;
}

LogMessage& LogMessage::Field(std::string_view key, double value) {
  std::string text;
  AppendDouble(value, NonFinite::kPrometheus, &text);
  if (!std::isfinite(value)) return Field(key, std::string_view(text));
  return AddNumber(key, std::move(text));
}

LogMessage& LogMessage::Field(std::string_view key, const Status& status) {
  return Field(key, std::string_view(status.ToString()));
}

LogMessage& LogMessage::AddNumber(std::string_view key, std::string value) {
  fields_.push_back({std::string(key), std::move(value), Kind::kRaw});
  return *this;
}

LogMessage::~LogMessage() {
  Logger& logger = GetLogger();
  std::lock_guard<std::mutex> lock(logger.mu);
  const LogOptions& opts = logger.options;
  const auto now = opts.clock ? opts.clock() : std::chrono::system_clock::now();
  const std::string msg = text_.str();
  std::string line;
  line.reserve(64 + msg.size() + fields_.size() * 24);
  auto key_of = [](const KeyValue& kv) {
    return (kv.key == "ts" || kv.key == "level" || kv.key == "msg")
               ? "_" + kv.key
               : kv.key;
  };
  if (opts.format == LogFormat::kJson) {
    JsonWriter w(&line);
    w.StartObject();
    w.Member("ts", FormatLogTimestamp(now));
    w.Member("level", LogLevelName(level_));
    w.Member("msg", msg);
    for (const KeyValue& kv : fields_) {
      w.Key(key_of(kv));
      // kRaw: a finite number's or a bool's text, made by Field().
      kv.kind == Kind::kRaw ? w.RawValue(kv.value) : w.String(kv.value);
    }
    w.EndObject();
  } else {
    line.append(FormatLogTimestamp(now)).push_back(' ');
    line.append(UpperLevelName(level_)).push_back(' ');
    AppendTextEscaped(msg, &line);
    for (const KeyValue& kv : fields_) {
      line.push_back(' ');
      AppendTextEscaped(key_of(kv), &line);
      line.push_back('=');
      if (kv.kind == Kind::kString && NeedsQuotes(kv.value)) {
        AppendJsonString(kv.value, &line);  // Go-style quoting: "a \"b\"\n"
      } else {
        line.append(kv.value);
      }
    }
  }
  if (opts.sink) {
    opts.sink(line);
  } else {
    line.push_back('\n');
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
}

}  // namespace lens
