// Unwrapping of log lines as they arrive from a cluster's log pipeline: CRI
// records, fluent-bit JSON records, ANSI colour codes; and the facts a line's
// prefix carries (timestamp, rank).
#ifndef LENS_TRAINING_LINE_H_
#define LENS_TRAINING_LINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lens::training {

// Removes ANSI escape sequences ("\x1b[32m", "\x1b[K") and colour codes whose
// ESC byte was lost in copying ("[32m", "[1;36m", "[0m"). Returns `line` itself
// when there is nothing to remove, else a view of `out`.
std::string_view StripAnsi(std::string_view line, std::string* out);

// A container runtime (CRI) log line: "<rfc3339> <stdout|stderr> <F|P>
// <message>".
struct CriLine {
  double timestamp_s = 0;
  bool partial =
      false;  // "P": the message continues in the next record of the stream
  bool is_stderr = false;
  std::string_view message;
};
bool ParseCriLine(std::string_view line, CriLine* out);

// A fluent-bit / Docker JSON record: {"log": "...", ...} or {"message": "...",
// ...}. Decodes the message (JSON escapes included) into `message`; the
// record's time ("time" RFC3339 or "date" Unix seconds) into `timestamp_s` when
// present. False when the line is not such a record. A record whose "_p" is "P"
// (fluent-bit's CRI parser) is partial: `cri` (optional) receives
// partial/stream flags so the caller joins it with the next record like a CRI
// line.
bool ParseJsonRecord(std::string_view line, std::string* message,
                     std::optional<double>* timestamp_s,
                     CriLine* cri = nullptr);

// Unix seconds of an RFC3339-like time at the start of s
// ("2025-01-02T03:04:05.123Z", "2024-06-21 10:50:42,441", "20251023 12:39:12");
// times without a zone are taken as UTC. Sets *consumed to the bytes used.
std::optional<double> ParseTimestamp(std::string_view s, size_t* consumed);

// Facts from the start of a log line.
struct LinePrefix {
  std::optional<double> timestamp_s;
  std::optional<int32_t> rank, world_size;
  bool primus = false;  // "[rank-i/n]" prefix of Primus
};
// Looks at the first bytes of a (cleaned) line for a timestamp and a rank
// marker
// ("[rank-3/8]", "[Rank 0]", a leading "3: " as srun --label prints it).
void ParsePrefix(std::string_view line, LinePrefix* out);

}  // namespace lens::training

#endif  // LENS_TRAINING_LINE_H_
