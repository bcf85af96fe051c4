#include "telemetry/forwarder.h"

#include <algorithm>
#include <vector>

#include "core/metric_writer.h"
#include "core/text.h"
#include "lens/log.h"

namespace lens::telemetry {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// How long the sending thread waits on an empty queue before looking at
// stop_ again (Stop() interrupts the wait anyway).
constexpr milliseconds kIdleWait{1000};

std::shared_ptr<const std::vector<double>> SendBounds() {
  static const auto bounds =
      std::make_shared<const std::vector<double>>(std::vector<double>{
          0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30});
  return bounds;
}

}  // namespace

Status ForwarderOptions::Validate() const {
  if (queue_dir.empty()) {
    return InvalidArgumentError("forwarder: queue_dir is empty");
  }
  if (initial_backoff.count() <= 0 || max_backoff < initial_backoff) {
    return InvalidArgumentError(
        "forwarder: initial_backoff must be positive and at most max_backoff");
  }
  return OkStatus();
}

std::string_view ForwardFailureName(ForwardFailure failure) {
  switch (failure) {
    case ForwardFailure::kHttp5xx:
      return "http_5xx";
    case ForwardFailure::kHttp429:
      return "http_429";
    case ForwardFailure::kRejected:
      return "rejected";
    case ForwardFailure::kConnection:
      return "connection";
    case ForwardFailure::kUnexpected:
      return "unexpected";
  }
  return "unknown";
}

StatusOr<std::unique_ptr<Forwarder>> Forwarder::Create(
    ForwarderOptions options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  std::string name = ForwardTargetName(options.target);
  LENS_ASSIGN_OR_RETURN(auto client, RemoteWriteClient::Create(options.target));
  options.queue.dir = options.queue_dir + "/" + name;
  LENS_ASSIGN_OR_RETURN(auto queue, DiskQueue::Open(options.queue));
  return std::unique_ptr<Forwarder>(
      new Forwarder(std::move(name), std::move(options), std::move(client),
                    std::move(queue)));
}

Forwarder::Forwarder(std::string name, ForwarderOptions options,
                     std::unique_ptr<RemoteWriteClient> client,
                     std::unique_ptr<DiskQueue> queue)
    : name_(std::move(name)),
      options_(std::move(options)),
      client_(std::move(client)),
      queue_(std::move(queue)),
      rng_(std::random_device{}()),
      send_seconds_(SendBounds()) {}

Forwarder::~Forwarder() { Stop(); }

Status Forwarder::Enqueue(std::string_view body, uint64_t samples) {
  return queue_->Append(body, samples);
}

void Forwarder::Start() {
  if (thread_.joinable()) return;
  stop_ = false;
  queue_->SetInterrupted(false);
  thread_ = std::thread([this] { Run(); });
}

void Forwarder::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  queue_->SetInterrupted(true);
  if (thread_.joinable()) thread_.join();
}

void Forwarder::Run() {
  std::vector<QueueRecord> batch;
  while (!stop_.load()) {
    Status st = queue_->Peek(1, kIdleWait, &batch);
    if (st.ok() && batch.empty()) continue;
    if (st.ok()) {
      if (!Deliver(batch.front())) return;
      st = queue_->Commit(batch.front().end);
    }
    if (!st.ok()) {
      LENS_LOG(ERROR).Field("target", name_).Field("error", st)
          << "forwarder: queue error";
      if (!Sleep(options_.max_backoff)) return;
    }
  }
}

bool Forwarder::Deliver(const QueueRecord& record) {
  milliseconds backoff = options_.initial_backoff;
  for (bool first = true;; first = false) {
    if (!first) retries_.fetch_add(1, std::memory_order_relaxed);
    requests_.fetch_add(1, std::memory_order_relaxed);
    const Clock::time_point start = Clock::now();
    const PostResult r = client_->Post(record.data, &stop_);
    if (r.stopped) return false;
    send_seconds_.Observe(
        std::chrono::duration<double>(Clock::now() - start).count());
    if (r.status >= 200 && r.status < 300) {
      records_.fetch_add(1, std::memory_order_relaxed);
      samples_.fetch_add(record.samples, std::memory_order_relaxed);
      return true;
    }
    // Jittered: uniform in [backoff/2, backoff].
    milliseconds delay(std::uniform_int_distribution<int64_t>(
        backoff.count() / 2, backoff.count())(rng_));
    ForwardFailure failure = ForwardFailure::kRejected;
    if (r.status == 0) {
      failure = ForwardFailure::kConnection;
    } else if (r.status == 429) {
      failure = ForwardFailure::kHttp429;
      if (r.retry_after_seconds >= 0) {
        // Not before then (and not at once either: Retry-After: 0).
        delay = std::max<milliseconds>(
            delay,
            std::min<milliseconds>(std::chrono::seconds(r.retry_after_seconds),
                                   options_.max_retry_after));
      }
    } else if (r.status >= 500) {
      failure = ForwardFailure::kHttp5xx;
    } else if (r.status < 400) {
      failure = ForwardFailure::kUnexpected;
    }
    failures_[static_cast<int>(failure)].fetch_add(1,
                                                   std::memory_order_relaxed);
    LogFailure(failure, r);
    if (failure == ForwardFailure::kRejected) {
      dropped_records_.fetch_add(1, std::memory_order_relaxed);
      dropped_samples_.fetch_add(record.samples, std::memory_order_relaxed);
      return true;
    }
    if (!Sleep(delay)) return false;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

bool Forwarder::Sleep(milliseconds delay) {
  std::unique_lock lock(mu_);
  return !wake_.wait_for(lock, delay, [this] { return stop_.load(); });
}

void Forwarder::LogFailure(ForwardFailure failure, const PostResult& r) {
  const Clock::time_point now = Clock::now();
  if (now - last_log_ < options_.failure_log_interval &&
      last_log_ != Clock::time_point{}) {
    ++unlogged_;
    return;
  }
  last_log_ = now;
  const bool rejected = failure == ForwardFailure::kRejected;
  LENS_LOG(WARN)
          .Field("target", name_)
          .Field("reason", ForwardFailureName(failure))
          .Field("status", r.status)
          .Field("error", r.error)
          .Field("body", PrintableExcerpt(r.body))
          .Field("failures_not_logged", unlogged_)
      << (rejected ? "forwarder: receiver rejected a record, dropped"
                   : "forwarder: send failed, retrying");
  unlogged_ = 0;
}

ForwarderStats Forwarder::Stats() const {
  ForwarderStats s;
  s.target = name_;
  s.requests = requests_.load(std::memory_order_relaxed);
  s.records = records_.load(std::memory_order_relaxed);
  s.samples = samples_.load(std::memory_order_relaxed);
  s.retries = retries_.load(std::memory_order_relaxed);
  for (int i = 0; i < kForwardFailureCount; ++i) {
    s.failures[i] = failures_[i].load(std::memory_order_relaxed);
  }
  s.dropped_records = dropped_records_.load(std::memory_order_relaxed);
  s.dropped_samples = dropped_samples_.load(std::memory_order_relaxed);
  s.max_queue_bytes = options_.queue.max_bytes;
  s.queue = queue_->Stats();
  s.send_seconds = send_seconds_.Snapshot();
  return s;
}

void Forwarder::RenderMetrics(std::string* out) const {
  const Forwarder* self = this;
  RenderForwarderMetrics({&self, 1}, out);
}

void RenderForwarderMetrics(std::span<const Forwarder* const> forwarders,
                            std::string* out) {
  std::vector<ForwarderStats> all;
  for (const Forwarder* f : forwarders) all.push_back(f->Stats());
  MetricWriter w(out);
  struct Value {
    const char* name;
    const char* help;
    const char* type;
    double (*get)(const ForwarderStats&);
  };
  static constexpr Value kValues[] = {
      {"lens_telemetry_forward_requests_total",
       "POSTs to the remote-write target, retries included", "counter",
       [](const ForwarderStats& s) { return static_cast<double>(s.requests); }},
      {"lens_telemetry_forward_records_total",
       "Queued requests the target accepted", "counter",
       [](const ForwarderStats& s) { return static_cast<double>(s.records); }},
      {"lens_telemetry_forward_samples_total",
       "Samples in the requests the target accepted", "counter",
       [](const ForwarderStats& s) { return static_cast<double>(s.samples); }},
      {"lens_telemetry_forward_retries_total", "POSTs that were retries",
       "counter",
       [](const ForwarderStats& s) { return static_cast<double>(s.retries); }},
      {"lens_telemetry_forward_queue_bytes",
       "Bytes queued on disk for the target, not yet delivered", "gauge",
       [](const ForwarderStats& s) {
         return static_cast<double>(s.queue.bytes);
       }},
      {"lens_telemetry_forward_queue_max_bytes",
       "The queue's bound; requests past it are refused (backpressure)",
       "gauge",
       [](const ForwarderStats& s) {
         return static_cast<double>(s.max_queue_bytes);
       }},
      {"lens_telemetry_forward_queue_records",
       "Requests queued on disk for the target", "gauge",
       [](const ForwarderStats& s) {
         return static_cast<double>(s.queue.records);
       }},
      {"lens_telemetry_forward_queue_oldest_age_seconds",
       "Age of the oldest request queued for the target", "gauge",
       [](const ForwarderStats& s) {
         return std::chrono::duration<double>(s.queue.oldest_age).count();
       }},
      {"lens_telemetry_forward_queue_refused_total",
       "Requests refused because the target's queue was full", "counter",
       [](const ForwarderStats& s) {
         return static_cast<double>(s.queue.refused_full);
       }},
  };
  for (const Value& v : kValues) {
    w.Family(v.name, v.help, v.type);
    for (const ForwarderStats& s : all)
      w.Sample({{"target", s.target}}, v.get(s));
  }
  w.Family("lens_telemetry_forward_failures_total",
           "POSTs that failed, by reason (rejected ones are dropped)",
           "counter");
  for (const ForwarderStats& s : all) {
    for (int i = 0; i < kForwardFailureCount; ++i) {
      w.Sample({{"target", s.target},
                {"reason", ForwardFailureName(static_cast<ForwardFailure>(i))}},
               static_cast<double>(s.failures[i]));
    }
  }
  w.Family("lens_telemetry_forward_dropped_records_total",
           "Requests dropped without delivery, by reason", "counter");
  for (const ForwarderStats& s : all) {
    w.Sample({{"target", s.target}, {"reason", "rejected"}},
             static_cast<double>(s.dropped_records));
  }
  w.Family("lens_telemetry_forward_dropped_samples_total",
           "Samples in the requests dropped without delivery", "counter");
  for (const ForwarderStats& s : all) {
    w.Sample({{"target", s.target}, {"reason", "rejected"}},
             static_cast<double>(s.dropped_samples));
  }
  constexpr std::string_view kSend =
      "lens_telemetry_forward_send_duration_seconds";
  w.Family(kSend, "How long POSTs to the target took", "histogram");
  for (const ForwarderStats& s : all) {
    w.HistogramSeries({{"target", s.target}}, s.send_seconds);
  }
}

}  // namespace lens::telemetry
