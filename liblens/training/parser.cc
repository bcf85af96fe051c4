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
#include "training/scan.h"

namespace lens {

using training::LineKind;

class TrainingLogParser::Impl {
 public:
  explicit Impl(TrainingParserOptions options)
      : options_(options), run_(options.first_run) {
    options_.max_line_bytes = std::max<size_t>(options_.max_line_bytes, 4096);
  }

  void Feed(std::string_view chunk);
  void Finish();
  std::vector<IterationRecord> TakeRecords() {
    last_record_index_ =
        SIZE_MAX;  // a later merge re-emits instead of editing in place
    return std::exchange(records_, {});
  }
  std::vector<TrainingEvent> TakeEvents() { return std::exchange(events_, {}); }

  TrainingParserOptions options_;
  TrainingParserStats stats_;
  std::vector<IterationRecord> records_;
  std::vector<TrainingEvent> events_;
  int32_t run_;

 private:
  void AppendCarry(std::string_view piece);
  void ProcessBlock(std::string_view block);
  void CompleteLine(std::string_view line);
  void HandleLine(std::string_view line);
  void HandleCri(const training::CriLine& cri);
  void ProcessMessage(std::string_view message,
                      std::optional<double> timestamp_s);
  void ProcessText(std::string_view text, std::optional<double> timestamp_s);
  void OnRecord(training::LineResult& result);
  void OnEvent(TrainingEvent& event);
  bool MergeIntoLast(const IterationRecord& r);
  void NewRun();
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

  // Run state.
  bool run_has_records_ = false;
  int64_t last_iteration_ = 0;
  IterationRecord last_record_;
  size_t last_record_index_ =
      SIZE_MAX;  // index in records_ while not yet taken
  TrainingFormat run_format_ = TrainingFormat::kUnknown;
  long long last_progress_ = -1;
  std::optional<int64_t> total_steps_;
  std::optional<TrainingEvent> last_event_[4];  // per type, in this run
  struct Checkpoint {
    TrainingEvent start;
    bool ended;
  };
  std::vector<Checkpoint>
      checkpoints_;  // the latest saves started in this run (<= 8)
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
        line_no_ += training::CountNewlines(block.substr(pos));
        return;
      }
      hit += pos;
      const void* nl = memrchr(block.data() + pos, '\n', hit - pos);
      if (nl != nullptr) {
        line_start =
            static_cast<size_t>(static_cast<const char*>(nl) - block.data()) +
            1;
        line_no_ +=
            training::CountNewlines(block.substr(pos, line_start - pos));
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
      OnRecord(result_);
      return;
    case LineKind::kEvent:
      OnEvent(result_.event);
      return;
    case LineKind::kProgress:
      if (!total_steps_ || *total_steps_ == result_.progress_total) {
        last_progress_ = result_.progress;
      }
      return;
    case LineKind::kTotalSteps:
      total_steps_ = result_.progress_total;
      return;
    case LineKind::kCandidate:
      CountCandidate(clean);
      return;
  }
}

void TrainingLogParser::Impl::NewRun() {
  ++run_;
  run_has_records_ = false;
  last_record_index_ = SIZE_MAX;
  last_progress_ = -1;
  total_steps_.reset();
  for (auto& e : last_event_) e.reset();
  checkpoints_.clear();
}

bool TrainingLogParser::Impl::MergeIntoLast(const IterationRecord& r) {
  bool added = false;
  // Megatron-DeepSpeed prints DeepSpeed's step line and then Megatron's richer
  // one.
  if (last_record_.format == TrainingFormat::kDeepSpeed &&
      (r.format == TrainingFormat::kMegatron ||
       r.format == TrainingFormat::kPrimus)) {
    last_record_.format = r.format;
  }
  for (int f = 0; f < static_cast<int>(IterationField::kCount); ++f) {
    auto field = static_cast<IterationField>(f);
    if (r.Has(field) && !last_record_.Has(field)) {
      last_record_.Set(field, *r.Get(field));
      added = true;
    }
  }
  for (const auto& field : r.extra) {
    bool known =
        std::any_of(last_record_.extra.begin(), last_record_.extra.end(),
                    [&](const auto& kv) { return kv.first == field.first; });
    if (!known) {
      last_record_.extra.push_back(field);
      added = true;
    }
  }
  return added;
}

void TrainingLogParser::Impl::OnRecord(training::LineResult& result) {
  IterationRecord& r = result.record;
  r.line = line_no_;
  if (result.progress >= 0 &&
      (!total_steps_ || *total_steps_ == result.progress_total)) {
    last_progress_ = result.progress;
  }
  if (!result.iteration_known) {
    // HF Trainer dicts carry no step: take the progress bar's, else count on
    // from the last.
    const int64_t next = run_has_records_ ? last_iteration_ + 1 : 1;
    r.iteration = std::max<int64_t>(last_progress_, next);
    if (total_steps_)
      r.Set(IterationField::kTargetIteration,
            static_cast<double>(*total_steps_));
  }
  if (run_has_records_) {
    if (r.iteration < last_iteration_) {
      NewRun();
    } else if (r.iteration == last_iteration_) {
      ++stats_.duplicate_iterations;
      if (!MergeIntoLast(r)) return;
      if (last_record_index_ != SIZE_MAX) {
        records_[last_record_index_] = last_record_;
      } else {
        // Already taken by the caller: emit the merged record again (an
        // idempotent upsert).
        records_.push_back(last_record_);
        last_record_index_ = records_.size() - 1;
      }
      return;
    }
  }
  r.run = run_;
  run_has_records_ = true;
  last_iteration_ = r.iteration;
  run_format_ = r.format;
  records_.push_back(std::move(r));
  last_record_ = records_.back();
  last_record_index_ = records_.size() - 1;
  ++stats_.records;
}

void TrainingLogParser::Impl::OnEvent(TrainingEvent& e) {
  e.line = line_no_;
  if (e.format == TrainingFormat::kUnknown) e.format = run_format_;
  const int type = static_cast<int>(e.type);
  if (e.type == TrainingEventType::kTrainingStart) {
    if (run_has_records_) {
      NewRun();
    } else if (last_event_[type]) {
      return;  // every rank announcing the same start
    }
  }
  if (e.type == TrainingEventType::kCheckpointSaveEnd) {
    // The save that wrote this path, else the latest open one. Its iteration
    // wins: NeMo's "finalized" line counts the step after the one saved.
    auto start = std::find_if(
        checkpoints_.rbegin(), checkpoints_.rend(),
        [&](const Checkpoint& c) { return c.start.path == e.path; });
    if (start == checkpoints_.rend()) {
      start = std::find_if(checkpoints_.rbegin(), checkpoints_.rend(),
                           [](const Checkpoint& c) { return !c.ended; });
    }
    if (start != checkpoints_.rend()) {
      if (start->start.iteration) e.iteration = start->start.iteration;
      if (e.path.empty()) e.path = start->start.path;
      const auto& t0 = start->start.timestamp_s;
      if (!start->ended && !e.duration_s && e.timestamp_s && t0 &&
          *e.timestamp_s >= *t0) {
        e.duration_s = std::round((*e.timestamp_s - *t0) * 1e6) / 1e6;
      }
      start->ended = true;
    }
  }
  if (run_has_records_ && !e.iteration &&
      e.type != TrainingEventType::kTrainingStart) {
    e.iteration =
        last_iteration_;  // saved (or ended) after the last logged step
  }
  if (e.type == TrainingEventType::kCheckpointSaveStart) {
    if (checkpoints_.size() >= 8) checkpoints_.erase(checkpoints_.begin());
    checkpoints_.push_back({e, false});
  }
  // One event per save and step: other ranks, and frameworks that log a save in
  // several lines or files (NeMo writes "x.ckpt" and "x-last.ckpt"), repeat it.
  const auto& last = last_event_[type];
  if (last && last->iteration == e.iteration) return;
  e.run = run_;
  last_event_[type] = e;
  events_.push_back(e);
  ++stats_.events;
}

TrainingLogParser::TrainingLogParser(TrainingParserOptions options)
    : impl_(std::make_unique<Impl>(options)) {}
TrainingLogParser::~TrainingLogParser() = default;
TrainingLogParser::TrainingLogParser(TrainingLogParser&&) noexcept = default;
TrainingLogParser& TrainingLogParser::operator=(TrainingLogParser&&) noexcept =
    default;

void TrainingLogParser::Feed(std::string_view chunk) { impl_->Feed(chunk); }
void TrainingLogParser::Finish() { impl_->Finish(); }
std::vector<IterationRecord> TrainingLogParser::TakeRecords() {
  return impl_->TakeRecords();
}
std::vector<TrainingEvent> TrainingLogParser::TakeEvents() {
  return impl_->TakeEvents();
}
const TrainingParserStats& TrainingLogParser::stats() const {
  return impl_->stats_;
}
int32_t TrainingLogParser::current_run() const { return impl_->run_; }

TrainingLog ParseTrainingLog(std::string_view text,
                             TrainingParserOptions options) {
  TrainingLogParser parser(options);
  parser.Feed(text);
  parser.Finish();
  TrainingLog log;
  log.records = parser.TakeRecords();
  log.events = parser.TakeEvents();
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
  log.stats = parser.stats();
  return log;
}

}  // namespace lens
