// `lens parse-log`'s output: the formats, the buffered writer and the printer
// that turns parsed batches into table rows, CSV, JSON lines or the one JSON
// document.
#ifndef LENS_DAEMONS_LENS_PARSE_LOG_OUTPUT_H_
#define LENS_DAEMONS_LENS_PARSE_LOG_OUTPUT_H_

#include <cerrno>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli_exit.h"
#include "core/json.h"
#include "lens/training.h"

namespace lens::cli {

enum class Format { kSummary, kTable, kJson, kJsonl, kCsv };

// Buffered stdout writer: output must never be what limits a 100 MB parse.
class Out {
 public:
  ~Out() { Flush(); }
  std::string& buf() { return buf_; }
  void MaybeFlush() {
    if (buf_.size() >= (1 << 20)) Flush();
  }
  void Flush() {
    if (!buf_.empty() && !failed_ &&
        std::fwrite(buf_.data(), 1, buf_.size(), stdout) != buf_.size()) {
      failed_ = true;  // a full disk: stop parsing, main reports it
      if (OutputErrno() == 0) OutputErrno() = errno;
    }
    buf_.clear();
  }
  // A write failed: nothing more will reach the output.
  bool failed() const { return failed_; }

 private:
  std::string buf_;
  bool failed_ = false;
};

// `s` as a quoted JSON string.
std::string JsonQuoted(std::string_view s);

// `s` as one CSV field (quoted when it holds a comma, quote or line break).
std::string CsvField(std::string_view s);

// The parser's counters as one JSON object.
void WriteStatsJson(const TrainingParserStats& s, JsonWriter* w);

// Writes records and events in input order. The parser emits each record
// once, complete, and holds the events that follow it until then, so every
// batch follows the previous one and merging a batch's two vectors by line
// gives input order.
class Printer {
 public:
  // `file` (empty: none) labels every row: a "file" key in JSON, a first column
  // in CSV. `summary` (may be null) receives everything printed.
  Printer(Format format, std::string_view file, Out* out, JsonWriter* json,
          TrainingSummaryBuilder* summary)
      : format_(format),
        json_label_(file.empty() ? "" : "\"file\":" + JsonQuoted(file) + ","),
        csv_label_(file.empty() ? "" : CsvField(file) + ","),
        out_(out),
        json_(json),
        summary_(summary) {}

  // Prints one batch, merged by line.
  void Add(const std::vector<IterationRecord>& records,
           const std::vector<TrainingEvent>& events,
           const std::vector<ValidationRecord>& validations,
           const std::vector<MemoryReport>& memory);

 private:
  void Emit(const IterationRecord& r);
  // Events, validations and memory reports: JSON outputs only.
  template <typename T>
  void Emit(const T& item);
  // One record: a line of its own in jsonl; in json, the next value of the
  // document's "items" array, on a line of its own (whitespace JSON allows).
  template <typename T>
  void AppendJsonItem(const T& x, std::string* b);

  Format format_;
  std::string json_label_, csv_label_;
  Out* out_;
  JsonWriter* json_;  // the document of --format json, else null
  TrainingSummaryBuilder* summary_;
  std::string item_;  // one record's text for json_
};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_LENS_PARSE_LOG_OUTPUT_H_
