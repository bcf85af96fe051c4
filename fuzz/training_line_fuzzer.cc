// libFuzzer target for training-log parsing (built with LENS_BUILD_FUZZERS=ON
// and clang).
//
// Input layout: byte 0 chooses the chunk size for the streaming parser and
// whether to use the smallest max_line_bytes; the rest is the log text. Besides
// looking for crashes and UB (run it under -DLENS_SANITIZE=address,undefined),
// it checks one property of the public contract: feeding the text in chunks
// split anywhere gives exactly what parsing it whole gives, whether results
// are taken at the end or after every chunk.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "lens/training.h"
#include "training/formats.h"
#include "training/line.h"
#include "training/numbers.h"

namespace {

// Serialises everything a parse produced, so two parses can be compared (and so
// that every output path runs on fuzzed records).
std::string Serialize(const lens::TrainingLog& log) {
  std::string out;
  for (const auto& r : log.records) {
    lens::AppendJson(r, &out);
    out.push_back('\n');
  }
  for (const auto& e : log.events) {
    lens::AppendJson(e, &out);
    out.push_back('\n');
  }
  const lens::TrainingParserStats& s = log.stats;
  out += std::to_string(s.bytes) + " " + std::to_string(s.lines) + " " +
         std::to_string(s.records) + " " + std::to_string(s.events) + " " +
         std::to_string(s.duplicate_iterations) + " " +
         std::to_string(s.unparsed_candidates) + " " +
         std::to_string(s.oversized_lines) + "\n" + s.unparsed_example;
  return out;
}

// Aborts (a fuzzer finding) when a streaming parse differs from the whole one.
void ExpectSame(const char* how, size_t chunk, const std::string& whole,
                const std::string& streamed) {
  if (whole == streamed) return;
  std::fprintf(stderr,
               "streaming parse (%s, chunk=%zu) differs from whole parse:\n"
               "--- whole\n%s\n--- streamed\n%s\n",
               how, chunk, whole.c_str(), streamed.c_str());
  std::abort();
}

// The other output formats, on whatever the parse produced.
void ExerciseOutputs(const lens::TrainingLog& log) {
  std::string out;
  for (const auto& r : log.records) {
    lens::AppendCsvRow(r, &out);
    lens::AppendTableRow(r, &out);
  }
  std::vector<lens::RunSummary> runs = lens::SummarizeTrainingLog(log);
  for (const auto& run : runs) lens::AppendJson(run, &out);
  out += lens::FormatSummary(runs, log.stats);
}

// Streaming parse in chunks of `chunk` bytes, taking results only at the end.
lens::TrainingLog ParseInChunks(std::string_view text, size_t chunk,
                                const lens::TrainingParserOptions& options) {
  lens::TrainingLogParser parser(options);
  for (size_t pos = 0; pos < text.size(); pos += chunk)
    parser.Feed(text.substr(pos, chunk));
  parser.Finish();
  lens::TrainingLog log;
  log.records = parser.TakeRecords();
  log.events = parser.TakeEvents();
  log.stats = parser.stats();
  return log;
}

// Streaming parse taking results after every chunk, as `lens parse-log` does. A
// record merged with a later line is then emitted again; the re-emitted record
// replaces the earlier one (an upsert by run and iteration, as the header
// describes), so the result must equal the whole parse.
lens::TrainingLog ParseTakingAsItGoes(
    std::string_view text, size_t chunk,
    const lens::TrainingParserOptions& options) {
  lens::TrainingLogParser parser(options);
  lens::TrainingLog log;
  // One step per chunk, then one more for Finish() (whatever the last chunk's
  // size).
  for (size_t pos = 0; pos < text.size() + chunk; pos += chunk) {
    if (pos < text.size()) {
      parser.Feed(text.substr(pos, chunk));
    } else {
      parser.Finish();
    }
    for (auto& r : parser.TakeRecords()) {
      auto same = std::find_if(
          log.records.begin(), log.records.end(), [&](const auto& old) {
            return old.run == r.run && old.iteration == r.iteration;
          });
      if (same != log.records.end()) {
        *same = std::move(r);
      } else {
        log.records.push_back(std::move(r));
      }
    }
    for (auto& e : parser.TakeEvents()) log.events.push_back(std::move(e));
  }
  log.stats = parser.stats();
  return log;
}

// The internal per-line functions, on each line of the input.
void ExerciseLineFunctions(std::string_view text) {
  namespace t = lens::training;
  std::string buf, message;
  t::Scratch scratch;
  t::LineResult result;
  for (int lines = 0; !text.empty() && lines < 64; ++lines) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text =
        nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);

    std::string_view clean = t::StripAnsi(line, &buf);
    t::LinePrefix prefix;
    t::ParsePrefix(clean, &prefix);
    t::ParseLine(clean, prefix, &result, &scratch);
    size_t consumed = 0;
    (void)t::ParseTimestamp(line, &consumed);
    if (consumed > line.size()) std::abort();
    t::Value value;
    (void)t::ParseValue(line, &value, /*allow_grouping=*/true);
    if (value.count < 0 || value.count > t::Value::kMax) std::abort();
    double number = 0;
    if (t::ParseNumber(line, &number) > line.size()) std::abort();
    t::CriLine cri;
    (void)t::ParseCriLine(line, &cri);
    std::optional<double> ts;
    (void)t::ParseJsonRecord(line, &message, &ts);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  lens::TrainingParserOptions options;
  options.first_run = 1 + (control >> 7);
  if (control & 0x40)
    options.max_line_bytes = 0;               // raised to the minimum (4096)
  const size_t chunk = 1 + (control & 0x3f);  // 1..64 bytes

  lens::TrainingLog whole = lens::ParseTrainingLog(text, options);
  if (whole.stats.bytes != text.size()) std::abort();
  const std::string expected = Serialize(whole);
  ExpectSame("chunks, taken at the end", chunk, expected,
             Serialize(ParseInChunks(text, chunk, options)));
  ExpectSame("chunks, taken after each", chunk, expected,
             Serialize(ParseTakingAsItGoes(text, chunk, options)));
  ExerciseOutputs(whole);
  ExerciseLineFunctions(text);
  return 0;
}
