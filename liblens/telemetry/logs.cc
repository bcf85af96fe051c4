#include "telemetry/logs.h"

#include <algorithm>
#include <list>
#include <mutex>
#include <unordered_map>

#include "telemetry/log_sink.h"

namespace lens::telemetry {
namespace {

int64_t Micros(Timestamp t) { return t.time_since_epoch().count(); }

// Moves `from` to the end of `to`.
template <typename T>
void Append(std::vector<T>&& from, std::vector<T>* to) {
  if (to->empty()) {
    *to = std::move(from);
  } else {
    std::move(from.begin(), from.end(), std::back_inserter(*to));
  }
}

// A message of max_message_bytes is one line with its CRI prefix: the
// parser must take that whole.
LogIngestOptions WithRoomForPrefixes(LogIngestOptions o) {
  o.parser.max_line_bytes =
      std::max(o.parser.max_line_bytes, o.limits.max_message_bytes + 128);
  return o;
}

}  // namespace

// One container's (or file's) log: its parser, what the parser completed and
// was not yet queued, and where it is written.
struct Stream {
  std::string key;
  WorkloadLabels workload;
  TrainingLogParser parser;
  LogBatch pending;
  std::shared_ptr<LogSink> sink;  // null without a store
  Timestamp last_line{};
  bool dirty = false;          // lines fed since the last Flush
  uint64_t lines_counted = 0;  // parser lines already counted
  std::list<Stream*>::iterator lru;
  std::vector<uint32_t> batch;  // this request's records
};

class LogIngest::Impl {
 public:
  Impl(Store* store, LogOwnerResolver resolver, LogIngestOptions options)
      : store_(store),
        resolver_(std::move(resolver)),
        options_(WithRoomForPrefixes(std::move(options))),
        metrics_(options_.max_nodes, options_.max_streams) {}

  Status Ingest(std::string_view body, LogFormat format, Timestamp now);
  Status IngestText(const LogStreamId& id, std::string_view text,
                    Timestamp now);
  Status Flush(Timestamp now);
  Status Stop();
  void ForgetWorkload(std::string_view uid);
  const LogMetrics& metrics() const { return metrics_; }

 private:
  using Sinks = std::vector<std::shared_ptr<LogSink>>;

  void ObserveLatency(const DecodedLogs& logs, Timestamp now);
  bool IsSelf(const LogRecord& r) const;
  Stream* StreamFor(const LogRecord& r, Timestamp now);
  Stream* Create(std::string key, const LogOwner& owner, std::string source,
                 Timestamp now);
  void Touch(Stream* s, Timestamp now);
  void Collect(Stream* s);
  void Queue(Stream* s, Sinks* to_drain);
  void Finish(Stream* s, Sinks* to_drain);
  void Remove(Stream* s);
  void EvictOverflow(Sinks* to_drain);
  Status Drain(const Sinks& sinks);

  Store* const store_;
  const LogOwnerResolver resolver_;
  const LogIngestOptions options_;
  LogMetrics metrics_;

  std::mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<Stream>>
      streams_;                   // GUARDED_BY(mu_)
  std::list<Stream*> lru_;        // GUARDED_BY(mu_), most recent first
  Sinks orphans_;                 // GUARDED_BY(mu_), dropped streams' queues
  bool stopped_ = false;          // GUARDED_BY(mu_)
  Timestamp latest_{};            // GUARDED_BY(mu_), the latest time given
  std::string key_, lines_;       // GUARDED_BY(mu_), scratch
  std::vector<Stream*> touched_;  // GUARDED_BY(mu_), scratch
};

void LogIngest::Impl::ObserveLatency(const DecodedLogs& logs, Timestamp now) {
  std::string_view node;
  Histogram* h = nullptr;
  for (const LogRecord& r : logs.records) {
    if (!r.time_us) continue;
    if (h == nullptr || r.host != node) {
      node = r.host;
      h = metrics_.Latency(node);
    }
    h->Observe(std::max<int64_t>(0, Micros(now) - *r.time_us) / 1e6);
  }
}

bool LogIngest::Impl::IsSelf(const LogRecord& r) const {
  if (!options_.self_namespace.empty() &&
      r.namespace_name != options_.self_namespace) {
    return false;
  }
  for (const std::string& prefix : options_.self_pod_prefixes) {
    if (r.pod_name.starts_with(prefix)) return true;
  }
  return false;
}

// The stream of a record's container, created (its owner resolved) on
// first use; null when the record is skipped (counted).
Stream* LogIngest::Impl::StreamFor(const LogRecord& r, Timestamp now) {
  if (!r.has_kubernetes || r.pod_name.empty() || r.container_name.empty()) {
    if (!options_.unattributed) {
      metrics_.Count(LogSkip::kNoKubernetes);
      return nullptr;
    }
    const LogStreamId& id = *options_.unattributed;
    auto it = streams_.find(id.key);
    if (it != streams_.end()) return it->second.get();
    return Create(id.key, id.owner, id.source, now);
  }
  if (IsSelf(r)) {
    metrics_.Count(LogSkip::kSelf);
    return nullptr;
  }
  key_.clear();
  if (r.pod_id.empty()) {
    key_.append(r.namespace_name).append("/").append(r.pod_name);
  } else {
    key_.append(r.pod_id);
  }
  key_.append("/").append(r.container_name);
  auto it = streams_.find(key_);
  if (it != streams_.end()) return it->second.get();
  LogOwner owner;
  if (resolver_) owner = resolver_(r.pod_id, r.namespace_name, r.pod_name);
  if (owner.workload_uid.empty()) {
    if (r.pod_id.empty()) {
      metrics_.Count(LogSkip::kNoWorkload);
      return nullptr;
    }
    owner = {std::string(r.pod_id), std::string(r.pod_name), "Pod",
             std::string(r.namespace_name)};
  }
  std::string source;
  source.append(r.namespace_name).append("/").append(r.pod_name);
  source.append("/").append(r.container_name);
  return Create(key_, owner, std::move(source), now);
}

Stream* LogIngest::Impl::Create(std::string key, const LogOwner& owner,
                                std::string source, Timestamp now) {
  auto s = std::make_unique<Stream>();
  s->key = key;
  s->workload = {owner.workload_uid, owner.workload_name, owner.workload_kind,
                 owner.namespace_name};
  s->parser = TrainingLogParser(options_.parser);
  if (store_ != nullptr) {
    s->sink =
        std::make_shared<LogSink>(store_, owner.workload_uid, std::move(source),
                                  &metrics_, options_.max_queued_rows);
  }
  s->last_line = now;
  lru_.push_front(s.get());
  s->lru = lru_.begin();
  Stream* out = s.get();
  streams_.emplace(std::move(key), std::move(s));
  metrics_.SetStreams(streams_.size());
  return out;
}

void LogIngest::Impl::Touch(Stream* s, Timestamp now) {
  s->last_line = now;
  s->dirty = true;
  lru_.splice(lru_.begin(), lru_, s->lru);
}

// Takes what the parser completed into the stream's pending batch; the
// gauges take its records as of the stream's last line.
void LogIngest::Impl::Collect(Stream* s) {
  LogBatch& p = s->pending;
  const size_t first_new = p.records.size();
  if (p.records.empty()) {
    s->parser.TakeRecords(&p.records);
  } else {
    Append(s->parser.TakeRecords(), &p.records);
  }
  Append(s->parser.TakeEvents(), &p.events);
  Append(s->parser.TakeValidations(), &p.validations);
  Append(s->parser.TakeMemoryReports(), &p.memory_reports);
  metrics_.Update(s->workload, std::span(p.records).subspan(first_new),
                  s->last_line);
  const uint64_t lines = s->parser.stats().lines;
  metrics_.CountLines(lines - s->lines_counted);
  s->lines_counted = lines;
  if (s->sink == nullptr) p = LogBatch();  // nowhere to store
}

void LogIngest::Impl::Queue(Stream* s, Sinks* to_drain) {
  if (s->sink == nullptr || s->pending.rows() == 0) return;
  s->sink->Enqueue(&s->pending);
  to_drain->push_back(s->sink);
}

// Ends the stream's input: a last unterminated line or partial record is
// parsed, and everything is queued.
void LogIngest::Impl::Finish(Stream* s, Sinks* to_drain) {
  s->parser.Finish();
  Collect(s);
  Queue(s, to_drain);
}

void LogIngest::Impl::Remove(Stream* s) {
  // Always kept until the next flush: a write of its rows may be in
  // flight on another thread and, if it fails, put them back.
  if (s->sink != nullptr) orphans_.push_back(s->sink);
  lru_.erase(s->lru);
  streams_.erase(streams_.find(s->key));  // not by s->key: it dies first
  metrics_.SetStreams(streams_.size());
}

void LogIngest::Impl::EvictOverflow(Sinks* to_drain) {
  while (streams_.size() > options_.max_streams) {
    Stream* s = lru_.back();
    Finish(s, to_drain);
    Remove(s);
  }
}

Status LogIngest::Impl::Drain(const Sinks& sinks) {
  Status first;
  for (const std::shared_ptr<LogSink>& sink : sinks) {
    Status st = sink->Drain();
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

Status LogIngest::Impl::Ingest(std::string_view body, LogFormat format,
                               Timestamp now) {
  metrics_.CountRequest();
  DecodedLogs logs;
  Status st = DecodeFluentBitLogs(body, format, options_.limits, &logs);
  if (!st.ok()) {
    metrics_.Count(st.code() == StatusCode::kResourceExhausted
                       ? LogError::kTooLarge
                       : LogError::kMalformed);
    return st;
  }
  metrics_.CountRecords(logs.records.size());
  metrics_.Count(LogError::kTruncated, logs.truncated);
  ObserveLatency(logs, now);
  Sinks to_drain;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return FailedPreconditionError("log ingest is stopped");
    latest_ = std::max(latest_, now);
    // Group the records by stream, keeping each stream's order.
    touched_.clear();
    const LogRecord* prev = nullptr;
    Stream* s = nullptr;
    for (uint32_t i = 0; i < logs.records.size(); ++i) {
      const LogRecord& r = logs.records[i];
      if (!r.has_message) {
        metrics_.Count(LogSkip::kNoMessage);
        continue;
      }
      const bool same = prev != nullptr && s != nullptr &&
                        r.pod_id == prev->pod_id &&
                        r.container_name == prev->container_name &&
                        r.pod_name == prev->pod_name &&
                        r.namespace_name == prev->namespace_name;
      if (!same) s = StreamFor(r, now);
      prev = &r;
      if (s == nullptr) continue;
      if (s->batch.empty()) touched_.push_back(s);
      s->batch.push_back(i);
    }
    for (Stream* t : touched_) {
      lines_.clear();
      for (uint32_t i : t->batch) {
        AppendCriLine(logs.records[i], Micros(now), &lines_);
      }
      t->batch.clear();
      t->parser.Feed(lines_);
      Touch(t, now);
      Collect(t);
      if (t->pending.rows() >= options_.batch_rows) Queue(t, &to_drain);
    }
    EvictOverflow(&to_drain);
  }
  (void)Drain(to_drain);  // counted; retried at Flush
  return OkStatus();
}

Status LogIngest::Impl::IngestText(const LogStreamId& id, std::string_view text,
                                   Timestamp now) {
  if (id.key.empty() || id.owner.workload_uid.empty()) {
    return InvalidArgumentError("log stream needs a key and a workload uid");
  }
  Sinks to_drain;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return FailedPreconditionError("log ingest is stopped");
    latest_ = std::max(latest_, now);
    auto it = streams_.find(id.key);
    Stream* s = it != streams_.end() ? it->second.get()
                                     : Create(id.key, id.owner, id.source, now);
    s->parser.Feed(text);
    Touch(s, now);
    Collect(s);
    if (s->pending.rows() >= options_.batch_rows) Queue(s, &to_drain);
    EvictOverflow(&to_drain);
  }
  (void)Drain(to_drain);
  return OkStatus();
}

Status LogIngest::Impl::Flush(Timestamp now) {
  Sinks to_drain, orphans;
  {
    std::lock_guard lock(mu_);
    latest_ = std::max(latest_, now);
    std::vector<Stream*> idle;
    for (auto& [key, s] : streams_) {
      if (now - s->last_line > options_.idle_timeout) {
        idle.push_back(s.get());
        continue;
      }
      if (s->dirty) {
        s->parser.Flush();
        Collect(s.get());
        s->dirty = false;
      }
      Queue(s.get(), &to_drain);
      if (s->sink != nullptr && s->sink->HasQueued()) {
        to_drain.push_back(s->sink);
      }
    }
    for (Stream* s : idle) {
      Finish(s, &to_drain);
      Remove(s);
    }
    orphans.swap(orphans_);
  }
  metrics_.Expire(now, options_.gauge_ttl);
  // A sink drained twice finds its queue empty the second time.
  Status st = Drain(to_drain);
  Status orphaned = Drain(orphans);
  std::lock_guard lock(mu_);
  for (std::shared_ptr<LogSink>& sink : orphans) {
    if (sink->HasQueued()) orphans_.push_back(std::move(sink));
  }
  return st.ok() ? orphaned : st;
}

Status LogIngest::Impl::Stop() {
  Sinks to_drain;
  {
    std::lock_guard lock(mu_);
    if (!stopped_) {
      stopped_ = true;
      while (!lru_.empty()) {
        Stream* s = lru_.back();
        Finish(s, &to_drain);
        Remove(s);
      }
    }
    to_drain.insert(to_drain.end(), orphans_.begin(), orphans_.end());
    orphans_.clear();
  }
  return Drain(to_drain);
}

// The streams stay (until idle): lines that arrive late continue their
// parsers' runs instead of starting new ones.
void LogIngest::Impl::ForgetWorkload(std::string_view uid) {
  Sinks to_drain;
  {
    std::lock_guard lock(mu_);
    for (auto& [key, s] : streams_) {
      if (s->workload.uid != uid) continue;
      s->parser.Flush();
      Collect(s.get());
      Queue(s.get(), &to_drain);
    }
    metrics_.Forget(uid, latest_);
  }
  (void)Drain(to_drain);
}

LogIngest::LogIngest(LogIngestOptions options, Store* store,
                     LogOwnerResolver resolver)
    : impl_(std::make_unique<Impl>(store, std::move(resolver),
                                   std::move(options))) {}

LogIngest::~LogIngest() { (void)impl_->Stop(); }

Status LogIngest::Ingest(std::string_view body, LogFormat format,
                         Timestamp received_at) {
  return impl_->Ingest(body, format, received_at);
}
Status LogIngest::IngestText(const LogStreamId& id, std::string_view text,
                             Timestamp received_at) {
  return impl_->IngestText(id, text, received_at);
}
Status LogIngest::Flush(Timestamp now) { return impl_->Flush(now); }
Status LogIngest::Flush() {
  return impl_->Flush(std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now()));
}
Status LogIngest::Stop() { return impl_->Stop(); }
void LogIngest::ForgetWorkload(std::string_view workload_uid) {
  impl_->ForgetWorkload(workload_uid);
}
void LogIngest::RenderMetrics(std::string* out) const {
  impl_->metrics().Render(out);
}
const LogMetrics& LogIngest::metrics() const { return impl_->metrics(); }

}  // namespace lens::telemetry
