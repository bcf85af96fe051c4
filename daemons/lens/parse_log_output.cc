#include "parse_log_output.h"

#include <type_traits>

namespace lens::cli {

// `s` as a quoted JSON string.
std::string JsonQuoted(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

// `s` as one CSV field (quoted when it holds a comma, quote or line break).
std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos)
    return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  return out + "\"";
}

void WriteStatsJson(const TrainingParserStats& s, JsonWriter* w) {
  w->StartObject();
  w->Member("bytes", uint64_t{s.bytes});
  w->Member("lines", uint64_t{s.lines});
  w->Member("records", uint64_t{s.records});
  w->Member("events", uint64_t{s.events});
  w->Member("duplicate_iterations", uint64_t{s.duplicate_iterations});
  w->Member("unparsed_candidates", uint64_t{s.unparsed_candidates});
  w->Member("oversized_lines", uint64_t{s.oversized_lines});
  w->Member("unparsed_example", s.unparsed_example);
  w->EndObject();
}

void Printer::Add(const std::vector<IterationRecord>& records,
                  const std::vector<TrainingEvent>& events,
                  const std::vector<ValidationRecord>& validations,
                  const std::vector<MemoryReport>& memory) {
  size_t i[4] = {0, 0, 0, 0};
  auto line = [&](size_t k) -> uint64_t {
    switch (k) {
      case 0:
        return i[0] < records.size() ? records[i[0]].line : UINT64_MAX;
      case 1:
        return i[1] < events.size() ? events[i[1]].line : UINT64_MAX;
      case 2:
        return i[2] < validations.size() ? validations[i[2]].line : UINT64_MAX;
      default:
        return i[3] < memory.size() ? memory[i[3]].line : UINT64_MAX;
    }
  };
  while (true) {
    size_t next = 0;
    for (size_t k = 1; k < 4; ++k)
      if (line(k) < line(next)) next = k;
    if (line(next) == UINT64_MAX) return;
    switch (next) {
      case 0:
        Emit(records[i[0]++]);
        break;
      case 1:
        Emit(events[i[1]++]);
        break;
      case 2:
        Emit(validations[i[2]++]);
        break;
      default:
        Emit(memory[i[3]++]);
        break;
    }
  }
}

void Printer::Emit(const IterationRecord& r) {
  if (summary_ != nullptr) summary_->Add(r);
  std::string& b = out_->buf();
  switch (format_) {
    case Format::kTable:
      AppendTableRow(r, &b);
      break;
    case Format::kCsv:
      b.append(csv_label_);
      AppendCsvRow(r, &b);
      break;
    case Format::kJson:
    case Format::kJsonl:
      AppendJsonItem(r, &b);
      break;
    case Format::kSummary:
      break;
  }
  out_->MaybeFlush();
}

// Events, validations and memory reports: JSON outputs only.
template <typename T>
void Printer::Emit(const T& item) {
  if constexpr (!std::is_same_v<T, MemoryReport>) {
    if (summary_ != nullptr) summary_->Add(item);
  }
  if (format_ == Format::kJson || format_ == Format::kJsonl) {
    AppendJsonItem(item, &out_->buf());
    out_->MaybeFlush();
  }
}

// One record: a line of its own in jsonl; in json, the next value of the
// document's "items" array, on a line of its own (whitespace JSON allows).
template <typename T>
void Printer::AppendJsonItem(const T& x, std::string* b) {
  std::string& text = format_ == Format::kJson ? item_ : *b;
  if (format_ == Format::kJson) item_.assign("\n");
  const size_t start = text.size();
  AppendJson(x, &text);
  // The library renders the record; the file's name goes in as its first
  // member: {"file":..,"type":..
  if (!json_label_.empty()) text.insert(start + 1, json_label_);
  if (format_ == Format::kJsonl) text.push_back('\n');
  if (format_ == Format::kJson) json_->RawValue(item_);
}

}  // namespace lens::cli
