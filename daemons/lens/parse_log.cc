// `lens parse-log [--format summary|table|json|jsonl|csv] [--store URL
// --workload UID] FILE... | -`
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_exit.h"
#include "commands.h"
#include "core/json.h"
#include "lens/status.h"
#include "lens/training.h"
#include "parse_log_output.h"

namespace lens::cli {
namespace {

struct Options {
  Format format = Format::kSummary;
  std::vector<std::string> files;
  std::string store_url;  // --store: also write to this store
  std::string workload;   // --workload: the workload the logs belong to
  std::string source;     // --source: overrides the per-file source name
};

// The store side of `--store`: counts what went to the sink.
struct StoreSink {
  ParseLogSink* sink = nullptr;
  std::string workload;
  std::string source_override;
  uint64_t records = 0;
  uint64_t events = 0;
  uint64_t validations = 0;
};

// A stable name for an input: its absolute path (so storing the same file
// again, from any directory, updates the same runs).
std::string SourceName(const std::string& name, const StoreSink& sink) {
  if (!sink.source_override.empty()) return sink.source_override;
  if (name == "-") return "stdin";
  char* real = ::realpath(name.c_str(), nullptr);
  if (!real) return name;
  std::string out(real);
  std::free(real);
  return out;
}

// Shows "parsing FILE: 42% (420/1000 MB)" on a terminal, at most 4 times a
// second.
class Progress {
 public:
  Progress(const std::string& name, uint64_t total)
      : name_(name),
        total_(total),
        enabled_(isatty(STDERR_FILENO) && total >= (64u << 20)) {}
  ~Progress() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
  }
  void Update(uint64_t done) {
    if (!enabled_) return;
    auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    shown_ = true;
    std::fprintf(stderr, "\rparsing %s: %3d%% (%llu/%llu MB)", name_.c_str(),
                 static_cast<int>(100.0 * static_cast<double>(done) /
                                  static_cast<double>(total_)),
                 static_cast<unsigned long long>(done >> 20),
                 static_cast<unsigned long long>(total_ >> 20));
  }

 private:
  std::string name_;
  uint64_t total_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_;
};

// Parses one input; prints per-record output as it goes. Returns the error for
// unreadable input.
// `summary` (may be null) receives every record and event.
Status ParseOne(const std::string& name, const Options& opt, bool label,
                Out* out, JsonWriter* json, StoreSink* sink,
                TrainingSummaryBuilder* summary, TrainingParserStats* stats) {
  int fd = STDIN_FILENO;
  uint64_t total = 0;
  if (name != "-") {
    fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError(errno, "cannot open " + name);
    struct stat st;
    if (::fstat(fd, &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        return InvalidArgumentError(name + ": is a directory, not a log file");
      }
      total = static_cast<uint64_t>(st.st_size);
    }
  }
  if (sink->sink) {
    Status st = sink->sink->Begin(sink->workload, SourceName(name, *sink));
    if (!st.ok()) {
      if (fd != STDIN_FILENO) ::close(fd);
      return st;
    }
  }
  // Hands one batch to the store (when storing) and to the printer.
  std::vector<IterationRecord> records;  // reused batch after batch
  auto consume = [&](TrainingLogParser& p, Printer& pr) -> Status {
    p.TakeRecords(&records);
    std::vector<TrainingEvent> events = p.TakeEvents();
    std::vector<ValidationRecord> validations = p.TakeValidations();
    std::vector<MemoryReport> memory = p.TakeMemoryReports();
    if (sink->sink && (!records.empty() || !events.empty() ||
                       !validations.empty() || !memory.empty())) {
      Status st = sink->sink->Write(
          TrainingBatch{records, events, validations, memory});
      if (!st.ok())
        return Status(st.code(), "store " + name + ": " + st.message());
      sink->records += records.size();
      sink->events += events.size();
      sink->validations += validations.size();
    }
    pr.Add(records, events, validations, memory);
    return OkStatus();
  };
  TrainingLogParser parser;
  Printer printer(opt.format, label ? name : "", out, json, summary);
  Progress progress(name, total);
  std::unique_ptr<char[]> buf(new char[1 << 20]);
  uint64_t done = 0;
  Status status;
  while (true) {
    ssize_t n = ::read(fd, buf.get(), 1 << 20);
    if (n < 0) {
      if (errno == EINTR) continue;
      status = ErrnoError(errno, "cannot read " + name);
      break;
    }
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
    parser.Feed(std::string_view(buf.get(), static_cast<size_t>(n)));
    status = consume(parser, printer);
    if (!status.ok() || out->failed()) break;
    progress.Update(done);
  }
  if (fd != STDIN_FILENO) ::close(fd);
  LENS_RETURN_IF_ERROR(status);
  parser.Finish();
  LENS_RETURN_IF_ERROR(consume(parser, printer));
  *stats = parser.stats();
  return OkStatus();
}

int Run(const Options& opt, ParseLogSinkOpener open_sink) {
  StoreSink sink;
  std::unique_ptr<ParseLogSink> store;
  if (!opt.store_url.empty()) {
    if (opt.workload.empty()) {
      std::fprintf(stderr,
                   "lens parse-log: --store needs --workload UID (the "
                   "workload these logs belong to)\n");
      return 2;
    }
    if (open_sink == nullptr) {
      std::fprintf(stderr,
                   "lens parse-log: this program cannot store (--store runs "
                   "in lens-platform)\n");
      return 2;
    }
    auto opened = open_sink(opt.store_url);
    if (!opened.ok()) {
      std::fprintf(stderr, "lens parse-log: %s\n",
                   opened.status().message().c_str());
      return 1;
    }
    store = std::move(*opened);
    sink = {store.get(), opt.workload, opt.source, 0, 0, 0};
  }
  Out out;
  const bool label = opt.files.size() > 1;
  int exit_code = 0;
  if (opt.format == Format::kCsv)
    out.buf() = (label ? "file," : "") + CsvHeader();
  if (opt.format == Format::kTable) out.buf() = TableHeader();
  // --format json: one document, {"inputs":[{"file":..,"items":[..],
  // "runs":[..],"runs_not_summarised":N,"stats":{..}},..]}, streamed through
  // the output buffer as it is written.
  JsonWriter json(&out.buf());
  const bool whole = opt.format == Format::kJson;
  if (whole) {
    json.StartObject();
    json.Key("inputs");
    json.StartArray();
  }
  for (const std::string& name : opt.files) {
    if (out.failed()) break;  // the output is gone: main says why
    if (whole) {
      json.StartObject();
      json.Member("file", name);
      json.Key("items");
      json.StartArray();
    }
    // Only the summary and json outputs print run summaries.
    std::optional<TrainingSummaryBuilder> summary;
    if (opt.format == Format::kSummary || whole) summary.emplace();
    TrainingParserStats stats;
    Status s =
        ParseOne(name, opt, label && !whole, &out, whole ? &json : nullptr,
                 &sink, summary ? &*summary : nullptr, &stats);
    if (!s.ok()) {
      out.Flush();
      std::fprintf(stderr, "lens parse-log: %s\n", s.message().c_str());
      exit_code = 1;
      if (whole) {
        json.EndArray();
        json.Member("error", s.message());
        json.EndObject();
      }
      continue;
    }
    if (opt.format == Format::kSummary) {
      if (label) out.buf().append("== " + name + "\n");
      out.buf().append(
          FormatSummary(summary->Build(), stats, summary->dropped_runs()));
    } else if (whole) {
      json.EndArray();
      json.Key("runs");
      json.StartArray();
      std::string run;
      for (const RunSummary& r : summary->Build()) {
        run.clear();
        AppendJson(r, &run);
        json.RawValue(run);
      }
      json.EndArray();
      json.Member("runs_not_summarised", uint64_t{summary->dropped_runs()});
      json.Key("stats");
      WriteStatsJson(stats, &json);
      json.EndObject();
    }
  }
  if (whole) {
    json.EndArray();
    json.EndObject();
    out.buf().push_back('\n');
  }
  out.Flush();
  if (store) {
    std::fprintf(stderr,
                 "lens parse-log: stored %llu iteration records, %llu "
                 "events and %llu validations for workload %s in %s\n",
                 static_cast<unsigned long long>(sink.records),
                 static_cast<unsigned long long>(sink.events),
                 static_cast<unsigned long long>(sink.validations),
                 opt.workload.c_str(), store->target().c_str());
  }
  return exit_code;
}

}  // namespace

Command AddParseLog(CLI::App& app, ParseLogSinkOpener open_sink) {
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "parse-log",
      "Parse training logs (Megatron, Primus, TorchTitan, NeMo, HF Trainer, "
      "DeepSpeed) into iteration records and events");
  static const std::map<std::string, Format> kFormats = {
      {"summary", Format::kSummary},
      {"table", Format::kTable},
      {"json", Format::kJson},
      {"jsonl", Format::kJsonl},
      {"csv", Format::kCsv}};
  cmd->add_option_function<std::string>(
         "--format",
         [opt](const std::string& name) {
           opt->format = kFormats.at(CLI::detail::to_lower(name));
         },
         "Output: summary (default), table, json, jsonl, csv")
      ->check(
          [](const std::string& name) -> std::string {
            if (kFormats.count(CLI::detail::to_lower(name)) > 0) return "";
            return "\"" + name +
                   "\" is not an output format; choose summary, table, json, "
                   "jsonl or csv";
          },
          "FORMAT");
  cmd->add_option("--store", opt->store_url,
                  "Also store runs, iterations and events in this store "
                  "(sqlite:///path/lens.db or postgresql://...); storing a "
                  "log again updates the same rows");
  cmd->add_option("--workload", opt->workload,
                  "Workload UID the logs belong to (required with --store)");
  cmd->add_option("--source", opt->source,
                  "Source name for run identity (default: the file's absolute "
                  "path; stdin: \"stdin\")");
  cmd->add_option("files", opt->files,
                  "Log files to parse; - reads standard input")
      ->required();
  return [opt, open_sink] { return Run(*opt, open_sink); };
}

}  // namespace lens::cli
