// The streaming parser: splits input into lines, skips lines without a trigger
// word, unwraps CRI/JSON/ANSI, classifies each line and applies the run rules
// (new runs, dedup, merge).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "lens/training.h"
#include "training/formats.h"
#include "training/line.h"
#include "training/numbers.h"
#include "training/runs.h"
#include "training/scan.h"

namespace lens {

using training::LineKind;

class TrainingLogParser::Impl {
 public:
  explicit Impl(TrainingParserOptions options)
      : options_(options), runs_(options.first_run, &stats_) {
    options_.max_line_bytes = std::max<size_t>(options_.max_line_bytes, 4096);
  }

  void Feed(std::string_view chunk);
  void Finish();

  TrainingParserOptions options_;
  TrainingParserStats stats_;
  training::RunAssembler runs_;

 private:
  void AppendCarry(std::string_view piece);
  void ProcessBlock(std::string_view block);
  void SkipLines(std::string_view lines);
  void CompleteLine(std::string_view line);
  void HandleLine(std::string_view line);
  void HandleCri(const training::CriLine& cri);
  void ProcessMessage(std::string_view message,
                      std::optional<double> timestamp_s);
  void ProcessText(std::string_view text, std::optional<double> timestamp_s);
  void CountCandidate(std::string_view line) {
    ++stats_.unparsed_candidates;
    if (stats_.unparsed_example.empty())
      stats_.unparsed_example = std::string(line.substr(0, 512));
  }

  // Line assembly.
  std::string carry_;
  bool carry_oversized_ = false;
  bool first_line_checked_ = false;
  bool cri_mode_ = false;
  std::string cri_partial_[2];  // stdout, stderr
  bool cri_partial_oversized_[2] = {false, false};
  uint64_t line_no_ = 0;

  // Reused buffers.
  std::string ansi_buf_, json_buf_;
  training::Scratch scratch_;
  training::LineResult result_;
};

void TrainingLogParser::Impl::AppendCarry(std::string_view piece) {
  if (carry_oversized_) return;
  if (carry_.size() + piece.size() > options_.max_line_bytes) {
    carry_oversized_ = true;
    carry_.clear();
    carry_.shrink_to_fit();
    return;
  }
  carry_.append(piece);
}

void TrainingLogParser::Impl::Feed(std::string_view chunk) {
  stats_.bytes += chunk.size();
  if (!carry_.empty() || carry_oversized_) {
    const void* nl = std::memchr(chunk.data(), '\n', chunk.size());
    if (nl == nullptr) {
      AppendCarry(chunk);
      return;
    }
    size_t n = static_cast<size_t>(static_cast<const char*>(nl) - chunk.data());
    AppendCarry(chunk.substr(0, n));
    std::string line = std::move(carry_);
    carry_.clear();
    CompleteLine(line);
    chunk.remove_prefix(n + 1);
  }
  const void* last = memrchr(chunk.data(), '\n', chunk.size());
  if (last == nullptr) {
    AppendCarry(chunk);
  } else {
    size_t n =
        static_cast<size_t>(static_cast<const char*>(last) - chunk.data()) + 1;
    ProcessBlock(chunk.substr(0, n));
    AppendCarry(chunk.substr(n));
  }
  stats_.lines = line_no_;
}

void TrainingLogParser::Impl::Finish() {
  if (!carry_.empty() || carry_oversized_) {
    std::string line = std::move(carry_);
    carry_.clear();
    CompleteLine(line);
  }
  // A partial CRI record whose end never came still carries data.
  for (int s = 0; s < 2; ++s) {
    if (cri_partial_[s].empty()) continue;
    std::string msg = std::move(cri_partial_[s]);
    cri_partial_[s].clear();
    ProcessMessage(msg, std::nullopt);
  }
  runs_.Flush();
  stats_.lines = line_no_;
}

// One line assembled from pieces (the carry); `carry_oversized_` says whether
// it was cut.
void TrainingLogParser::Impl::CompleteLine(std::string_view line) {
  ++line_no_;
  if (carry_oversized_) {
    carry_oversized_ = false;
    ++stats_.oversized_lines;
    return;
  }
  if (!first_line_checked_) {
    training::CriLine cri;
    cri_mode_ = training::ParseCriLine(line, &cri);
    first_line_checked_ = true;
  }
  if (cri_mode_ || training::FindTrigger(line) < line.size()) HandleLine(line);
}

// `block` holds complete lines and ends with '\n'.
void TrainingLogParser::Impl::ProcessBlock(std::string_view block) {
  size_t pos = 0;
  if (!first_line_checked_) {
    size_t end = block.find('\n');
    training::CriLine cri;
    cri_mode_ = training::ParseCriLine(block.substr(0, end), &cri);
    first_line_checked_ = true;
  }
  while (pos < block.size()) {
    size_t line_start = pos, line_end = 0;
    if (cri_mode_) {
      // CRI partial records must be joined whether or not a piece holds a
      // trigger word.
      line_end = block.find('\n', pos);
    } else {
      size_t hit = training::FindTrigger(block.substr(pos));
      if (hit == block.size() - pos) {
        SkipLines(block.substr(pos));
        return;
      }
      hit += pos;
      const void* nl = memrchr(block.data() + pos, '\n', hit - pos);
      if (nl != nullptr) {
        line_start =
            static_cast<size_t>(static_cast<const char*>(nl) - block.data()) +
            1;
        SkipLines(block.substr(pos, line_start - pos));
      }
      line_end = block.find('\n', hit);
    }
    ++line_no_;
    std::string_view line = block.substr(line_start, line_end - line_start);
    if (line.size() > options_.max_line_bytes) {
      ++stats_.oversized_lines;
    } else {
      HandleLine(line);
    }
    pos = line_end + 1;
  }
}

// Complete lines without a trigger word: counted, and an oversized one is
// counted as such (only a region longer than the limit can hold one).
void TrainingLogParser::Impl::SkipLines(std::string_view lines) {
  if (lines.size() <= options_.max_line_bytes) {
    line_no_ += training::CountNewlines(lines);
    return;
  }
  while (!lines.empty()) {
    const void* nl = std::memchr(lines.data(), '\n', lines.size());
    const size_t len =
        nl == nullptr
            ? lines.size()
            : static_cast<size_t>(static_cast<const char*>(nl) - lines.data());
    ++line_no_;
    if (len > options_.max_line_bytes) ++stats_.oversized_lines;
    lines.remove_prefix(std::min(lines.size(), len + 1));
  }
}

void TrainingLogParser::Impl::HandleLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  training::CriLine cri;
  if (cri_mode_ && training::ParseCriLine(line, &cri)) {
    HandleCri(cri);
    return;
  }
  if (line.size() > 1 && line[0] == '{' && line[1] == '"') {
    std::optional<double> ts;
    training::CriLine flags;
    if (training::ParseJsonRecord(line, &json_buf_, &ts, &flags)) {
      const int s = flags.is_stderr ? 1 : 0;
      if (flags.partial || !cri_partial_[s].empty() ||
          cri_partial_oversized_[s]) {
        flags.message = json_buf_;
        flags.timestamp_s = ts.value_or(0);
        HandleCri(flags);
        return;
      }
      ProcessMessage(json_buf_, ts);
      return;
    }
  }
  ProcessMessage(line, std::nullopt);
}

void TrainingLogParser::Impl::HandleCri(const training::CriLine& cri) {
  const int s = cri.is_stderr ? 1 : 0;
  std::string& partial = cri_partial_[s];
  if (cri.partial || !partial.empty() || cri_partial_oversized_[s]) {
    if (partial.size() + cri.message.size() > options_.max_line_bytes) {
      cri_partial_oversized_[s] = true;
      partial.clear();
    } else if (!cri_partial_oversized_[s]) {
      partial.append(cri.message);
    }
    if (cri.partial) return;
    if (cri_partial_oversized_[s]) {
      cri_partial_oversized_[s] = false;
      ++stats_.oversized_lines;
      return;
    }
    if (training::FindTrigger(partial) < partial.size())
      ProcessMessage(partial, cri.timestamp_s);
    partial.clear();
    return;
  }
  if (training::FindTrigger(cri.message) < cri.message.size()) {
    ProcessMessage(cri.message, cri.timestamp_s);
  }
}

// A message may hold several terminal lines: progress bars redraw with '\r',
// JSON log fields may hold '\n'.
void TrainingLogParser::Impl::ProcessMessage(
    std::string_view message, std::optional<double> timestamp_s) {
  while (!message.empty()) {
    const void* cr = std::memchr(message.data(), '\r', message.size());
    const void* nl = std::memchr(message.data(), '\n', message.size());
    const char* first =
        static_cast<const char*>(cr == nullptr   ? nl
                                 : nl == nullptr ? cr
                                                 : std::min(cr, nl));
    size_t cut = first == nullptr ? std::string_view::npos
                                  : static_cast<size_t>(first - message.data());
    std::string_view piece = message.substr(0, cut);
    if (!piece.empty()) ProcessText(piece, timestamp_s);
    if (cut == std::string_view::npos) break;
    message.remove_prefix(cut + 1);
  }
}

void TrainingLogParser::Impl::ProcessText(std::string_view text,
                                          std::optional<double> timestamp_s) {
  std::string_view clean = training::StripAnsi(text, &ansi_buf_);
  training::LinePrefix prefix;
  training::ParsePrefix(clean, &prefix);
  // The runtime's time (CRI, JSON record) has a zone; a log's own prefix
  // usually has none.
  if (timestamp_s) prefix.timestamp_s = timestamp_s;
  training::ParseLine(clean, prefix, &result_, &scratch_);
  switch (result_.kind) {
    case LineKind::kNothing:
      return;
    case LineKind::kRecord:
      if (result_.malformed) CountCandidate(clean);
      runs_.OnRecord(result_, line_no_);
      return;
    case LineKind::kEvent:
      runs_.OnEvent(result_.event, line_no_);
      return;
    case LineKind::kValidation:
      runs_.OnValidation(result_.validation, result_.validation_iteration_known,
                         line_no_);
      return;
    case LineKind::kMemoryReport:
      runs_.OnMemoryReports(result_.memory, line_no_);
      return;
    case LineKind::kProgress:
      runs_.OnProgress(result_.progress, result_.progress_total);
      return;
    case LineKind::kTotalSteps:
      runs_.OnTotalSteps(result_.progress_total);
      return;
    case LineKind::kCandidate:
      CountCandidate(clean);
      return;
  }
}

TrainingLogParser::TrainingLogParser(TrainingParserOptions options)
    : impl_(std::make_unique<Impl>(options)) {}
TrainingLogParser::~TrainingLogParser() = default;
TrainingLogParser::TrainingLogParser(TrainingLogParser&&) noexcept = default;
TrainingLogParser& TrainingLogParser::operator=(TrainingLogParser&&) noexcept =
    default;

void TrainingLogParser::Feed(std::string_view chunk) { impl_->Feed(chunk); }
void TrainingLogParser::Finish() { impl_->Finish(); }
void TrainingLogParser::Flush() { impl_->runs_.Flush(); }
std::vector<IterationRecord> TrainingLogParser::TakeRecords() {
  return impl_->runs_.TakeRecords();
}
void TrainingLogParser::TakeRecords(std::vector<IterationRecord>* out) {
  impl_->runs_.TakeRecords(out);
}
std::vector<TrainingEvent> TrainingLogParser::TakeEvents() {
  return impl_->runs_.TakeEvents();
}
std::vector<ValidationRecord> TrainingLogParser::TakeValidations() {
  return impl_->runs_.TakeValidations();
}
std::vector<MemoryReport> TrainingLogParser::TakeMemoryReports() {
  return impl_->runs_.TakeMemoryReports();
}
const TrainingParserStats& TrainingLogParser::stats() const {
  return impl_->stats_;
}
int32_t TrainingLogParser::current_run() const { return impl_->runs_.run(); }

TrainingLog ParseTrainingLog(std::string_view text,
                             TrainingParserOptions options) {
  TrainingLogParser parser(options);
  parser.Feed(text);
  parser.Finish();
  TrainingLog log;
  log.records = parser.TakeRecords();
  log.events = parser.TakeEvents();
  log.validations = parser.TakeValidations();
  log.memory_reports = parser.TakeMemoryReports();
  log.stats = parser.stats();
  return log;
}

StatusOr<TrainingLog> ParseTrainingLogFile(const std::string& path,
                                           TrainingParserOptions options) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open " + path);
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return InvalidArgumentError(path + ": is a directory, not a log file");
  }
  TrainingLogParser parser(options);
  TrainingLog log;
  std::string buf(1 << 20, '\0');
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = ErrnoError(errno, "read " + path);
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    parser.Feed(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  ::close(fd);
  parser.Finish();
  log.records = parser.TakeRecords();
  log.events = parser.TakeEvents();
  log.validations = parser.TakeValidations();
  log.memory_reports = parser.TakeMemoryReports();
  log.stats = parser.stats();
  return log;
}

}  // namespace lens
