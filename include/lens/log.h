// Structured logging for Lens libraries and daemons.
//
// One process-wide logger, configured once (normally by a daemon's main) with
// ConfigureLogging(). Every message is one line, either text
//   2024-05-01T12:00:00.123456Z INFO gpu probe done node=n1 gpus=8
// or JSON
//   {"ts":"2024-05-01T12:00:00.123456Z","level":"info","msg":"gpu probe done",
//    "node":"n1","gpus":8}
// Timestamps are RFC 3339, UTC, microseconds.
//
// Usage:
//   LENS_LOG(INFO) << "probe done";
//   LENS_LOG(WARN).Field("path", path).Field("error", status) << "skipping
//   device";
//
// A disabled level costs one relaxed atomic load: the stream arguments and
// fields are not evaluated. Library code logs sparingly (leaf code returns
// Status; callers log once).
#ifndef LENS_LOG_H_
#define LENS_LOG_H_

#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "lens/export.h"
#include "lens/status.h"

namespace lens {

// Severity, in increasing order. A logger at level L emits messages with level
// >= L.
enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// Line format of the logger.
enum class LogFormat : int { kText = 0, kJson = 1 };

// "debug", "info", "warn", "error" (lower case, as written in JSON and config
// files).
LENS_EXPORT std::string_view LogLevelName(LogLevel level);
// "text" or "json".
LENS_EXPORT std::string_view LogFormatName(LogFormat format);

// Parses "debug", "info", "warn" (or "warning"), "error", case-insensitively.
// InvalidArgument naming the bad value and the accepted ones otherwise.
LENS_EXPORT StatusOr<LogLevel> ParseLogLevel(std::string_view name);
// Parses "text" or "json", case-insensitively. InvalidArgument otherwise.
LENS_EXPORT StatusOr<LogFormat> ParseLogFormat(std::string_view name);

// Receives one formatted line (without the trailing newline). Called with the
// logger's lock held, so lines never interleave; a sink must not log itself
// (that would deadlock).
using LogSink = std::function<void(std::string_view line)>;

// Options of the process-wide logger.
struct LogOptions {
  LogLevel level = LogLevel::kInfo;
  LogFormat format = LogFormat::kText;
  // Empty: write to stderr (one write per line).
  LogSink sink;
  // Empty: std::chrono::system_clock::now. Tests inject a fixed clock.
  std::function<std::chrono::system_clock::time_point()> clock;
};

// Replaces the configuration of the process-wide logger (the defaults above
// apply before the first call). Thread-safe; messages being emitted
// concurrently use either the old or the new configuration, never a mix. Call
// it once at start-up (tests may call it again).
LENS_EXPORT void ConfigureLogging(LogOptions options);

// True if a message at `level` would be emitted. Thread-safe; one relaxed
// atomic load.
LENS_EXPORT bool LogEnabled(LogLevel level);

// Formats `time` as RFC 3339 UTC with microseconds:
// "2024-05-01T12:00:00.123456Z".
LENS_EXPORT std::string FormatLogTimestamp(
    std::chrono::system_clock::time_point time);

// One message under construction; emitted by the destructor. Normally created
// by LENS_LOG, which skips construction when the level is disabled. Not
// thread-safe itself (it is a temporary owned by one thread); emitting is
// thread-safe.
class LENS_EXPORT LogMessage {
 public:
  // `level` is the message's severity; the message is emitted even if the level
  // is disabled (LENS_LOG does the check).
  explicit LogMessage(LogLevel level);
  ~LogMessage();
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;

  // Adds a key/value field, kept in insertion order after ts, level and msg.
  // Keys that collide with "ts", "level" or "msg" are written with a leading
  // underscore.
  LogMessage& Field(std::string_view key, std::string_view value);
  LogMessage& Field(std::string_view key, const char* value) {
    return Field(key, std::string_view(value == nullptr ? "" : value));
  }
  LogMessage& Field(std::string_view key, const std::string& value) {
    return Field(key, std::string_view(value));
  }
  LogMessage& Field(std::string_view key, bool value);
  template <typename T>
  requires(std::integral<T> &&
           !std::same_as<T, bool>) LogMessage& Field(std::string_view key,
                                                     T value) {
    if constexpr (std::is_signed_v<T>) {
      return AddNumber(key, std::to_string(static_cast<int64_t>(value)));
    } else {
      return AddNumber(key, std::to_string(static_cast<uint64_t>(value)));
    }
  }
  // Non-finite values are written as the strings "NaN", "+Inf", "-Inf" (JSON
  // has no literal).
  LogMessage& Field(std::string_view key, double value);
  // Writes status.ToString() ("OK" or "NOT_FOUND: ...").
  LogMessage& Field(std::string_view key, const Status& status);

  // Appends to the message text.
  template <typename T>
  LogMessage& operator<<(const T& value) {
    text_ << value;
    return *this;
  }

 private:
  enum class Kind {
    kString,
    kRaw
  };  // kRaw: number/bool literal, unquoted in JSON
  struct KeyValue {
    std::string key;
    std::string value;
    Kind kind;
  };
  LogMessage& AddNumber(std::string_view key, std::string value);

  LogLevel level_;
  std::ostringstream text_;
  std::vector<KeyValue> fields_;
};

namespace log_internal {
// Lets LENS_LOG be an expression of type void (so it nests safely in if/else).
struct Voidify {
  void operator&(const LogMessage&) {}
};
inline constexpr LogLevel kLevel_DEBUG = LogLevel::kDebug;
inline constexpr LogLevel kLevel_INFO = LogLevel::kInfo;
inline constexpr LogLevel kLevel_WARN = LogLevel::kWarn;
inline constexpr LogLevel kLevel_ERROR = LogLevel::kError;
}  // namespace log_internal

}  // namespace lens

// LENS_LOG(DEBUG|INFO|WARN|ERROR): a LogMessage when the level is enabled;
// otherwise nothing after it is evaluated.
#define LENS_LOG(severity)                                     \
  !::lens::LogEnabled(::lens::log_internal::kLevel_##severity) \
      ? (void)0                                                \
      : ::lens::log_internal::Voidify() &                      \
            ::lens::LogMessage(::lens::log_internal::kLevel_##severity)

#endif  // LENS_LOG_H_
