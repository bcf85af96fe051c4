// Fluent Bit's `http` output as it arrives at /v1/logs: `format json` (one
// JSON array of records) and `format json_lines` / `json_stream` (records one
// after another), each record a map of the tail input's fields
// (`log` or `message`, `stream`, `time`, `logtag` or `_p`) plus the date key
// the output adds (`json_date_key`, default `date`, in any
// `json_date_format`) and the `kubernetes` map of the kubernetes filter
// (pod_name, namespace_name, pod_id, host, container_name; labels,
// annotations, docker_id, container_hash and container_image are skipped).
// Decoded with RapidJSON's SAX reader in place: strings are unescaped inside
// one copy of the body and records are views into it.
#ifndef LENS_TELEMETRY_LOG_DECODE_H_
#define LENS_TELEMETRY_LOG_DECODE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens::telemetry {

enum class LogFormat : uint8_t {
  kJson,       // one array of records
  kJsonLines,  // records one after another (json_lines and json_stream)
  kAuto,       // by the first byte that is not blank: '[' json, else lines
};

// "json", "json_lines" and "json_stream", fluent-bit's names; nullopt for
// any other (msgpack and gelf are not accepted).
std::optional<LogFormat> LogFormatFromName(std::string_view name);

// Checked while decoding; see DecodeFluentBitLogs for what each does.
struct LogDecodeLimits {
  size_t max_body_bytes = size_t{64} << 20;
  size_t max_records = 200'000;
  size_t max_message_bytes = size_t{1} << 20;  // longer ones are truncated
};

// One record, as views into DecodedLogs::buffer.
struct LogRecord {
  // Unix microseconds: the date key (`double` seconds with the fraction read
  // digit by digit, `epoch`, `epoch_ms`, `iso8601`, `java_sql_timestamp`),
  // else the record's own `time`; nullopt when neither is readable.
  std::optional<int64_t> time_us;
  std::string_view time_text;  // the record's `time` string ("" if absent)
  std::string_view message;    // `log`, else `message` (decoded)
  bool has_message = false;    // false: neither field is a string
  // `logtag` "P": fluent-bit's regex `cri` parser passed a partial CRI
  // record through; its line continues in the stream's next record. `_p` is
  // not read: the built-in multiline `cri` parser has already joined the
  // pieces and leaves the first piece's flag on the joined record
  // (src/multiline/flb_ml.c, flb_ml_flush_stream_group repacks the first
  // line's keys).
  bool partial = false;
  bool is_stderr = false;  // `stream` "stderr"
  bool truncated = false;  // message cut to LogDecodeLimits::max_message_bytes
  bool has_kubernetes = false;  // a `kubernetes` map was present
  std::string_view pod_name, namespace_name, pod_id, container_name, host;
};

// A decoded body. Decoding into the same object again reuses its memory.
struct DecodedLogs {
  std::string buffer;  // the body, unescaped in place; records point here
  std::vector<LogRecord> records;
  uint64_t truncated = 0;  // messages cut to max_message_bytes
  uint64_t empty = 0;  // records with neither a message nor metadata, left out
};

// Decodes `body`. Errors: kResourceExhausted when the body is over
// max_body_bytes (checked first) or holds more than max_records records;
// kInvalidArgument for malformed JSON or the wrong shape (a json body that is
// not an array, an element or line that is not an object), naming the byte
// offset. On error `out->records` is empty: a request is taken whole or not
// at all.
Status DecodeFluentBitLogs(std::string_view body, LogFormat format,
                           const LogDecodeLimits& limits, DecodedLogs* out);

// Unix microseconds of a date value: a JSON number's text (`is_number`;
// seconds with up to 6 fraction digits read exactly, more rounded; an integer
// of 13 digits or more is milliseconds) or an RFC 3339 / SQL timestamp string.
std::optional<int64_t> ParseLogDate(std::string_view text, bool is_number);

// Appends "YYYY-MM-DDTHH:MM:SS.ffffffZ" (the CRI log's time format, at
// microseconds) for `time_us`.
void AppendRfc3339Micros(int64_t time_us, std::string* out);

// Appends the record as the line the kubelet wrote for it, in the CRI log
// format ("<time> <stdout|stderr> <P|F> <text>\n", kubernetes
// pkg/kubelet/kuberuntime/logs/logs.go): the record's own `time` when it is
// an RFC 3339 time, else its date, else `fallback_us`. A message that is a
// CRI line itself (tail without a parser) is appended as it is. The trailing
// newline of a Docker-style message is dropped and inner newlines become
// '\r', so a record stays one line (the parser splits lines at both).
void AppendCriLine(const LogRecord& record, int64_t fallback_us,
                   std::string* out);

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_LOG_DECODE_H_
