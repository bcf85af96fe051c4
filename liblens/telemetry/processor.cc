#include "telemetry/processor.h"

#include <snappy.h>

#include <cmath>

#include "lens/log.h"

namespace lens {

TelemetryProcessor::~TelemetryProcessor() = default;

StatusOr<std::unique_ptr<TelemetryProcessor>> TelemetryProcessor::Create(
    const TelemetryOptions& options, Store* store) {
  LENS_RETURN_IF_ERROR(options.Validate());
  if (!store) return InvalidArgumentError("no store");
  auto p = std::make_unique<telemetry::Processor>(options, store);
  LENS_RETURN_IF_ERROR(p->Open());
  return std::unique_ptr<TelemetryProcessor>(std::move(p));
}

namespace telemetry {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Selected(const std::vector<std::string>& prefixes, std::string_view name) {
  if (prefixes.empty()) return true;
  for (const std::string& p : prefixes) {
    if (name.substr(0, p.size()) == p) return true;
  }
  return false;
}

}  // namespace

EnrichOptions EnrichOptionsOf(const TelemetryOptions& o) {
  return EnrichOptions{o.series, o.compat_names};
}

Processor::Processor(const TelemetryOptions& options, Store* store)
    : options_(options),
      enrich_(EnrichOptionsOf(options)),
      store_(store),
      feed_(store, options.ownership_history) {
  limits_.max_compressed_bytes = options.max_body_bytes;
  limits_.max_uncompressed_bytes = options.max_uncompressed_bytes;
  limits_.max_labels_per_series = options.max_labels_per_series;
  auto counter = [&](const char* name, const char* help) {
    return *metrics_.AddCounter(name, help);
  };
  requests_ = *metrics_.AddCounterFamily(
      "lens_telemetry_requests_total",
      "Requests answered, by kind (remote_write, logs) and HTTP status",
      {"kind", "code"});
  dropped_ = *metrics_.AddCounterFamily(
      "lens_telemetry_samples_dropped_total",
      "Samples not taken, by reason (bad_request, too_large, queue_full, "
      "busy, unsupported, store_error; history_rejected and history_full: "
      "left out of the sample history only, a bad series or one past "
      "sampleMaxSeries)",
      {"reason"});
  samples_in_ = counter("lens_telemetry_samples_received_total",
                        "Samples in remote-write requests decoded");
  samples_enriched_ = counter("lens_telemetry_samples_enriched_total",
                              "Samples that gained workload labels");
  series_split_ = counter(
      "lens_telemetry_series_split_total",
      "Series whose samples had several owners and were split where the "
      "owner changed");
  bytes_in_ = counter("lens_telemetry_received_bytes_total",
                      "Remote-write request bytes received (compressed)");
  history_samples_ = counter(
      "lens_telemetry_history_samples_total",
      "Samples written to the store's sample history (before resolution)");
  history_failures_ = counter("lens_telemetry_history_failures_total",
                              "Sample history writes that failed");
  history_evicted_ = counter(
      "lens_telemetry_history_evicted_series_total",
      "Stale series the sample history removed at sampleMaxSeries to make "
      "room for new ones");
  ingest_seconds_ = *metrics_.AddHistogram(
      "lens_telemetry_ingest_seconds",
      "Time to decode, enrich and queue one remote-write request",
      {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1});
}

Processor::~Processor() { Stop(); }

Status Processor::Open() {
  for (size_t i = 0; i < options_.forward.size(); ++i) {
    const TelemetryForwardTarget& t = options_.forward[i];
    ForwarderOptions fo;
    fo.target.url = t.url;
    fo.target.bearer_token = t.bearer_token;
    fo.target.ca_file = t.ca_file;
    fo.target.insecure_skip_verify = t.insecure_skip_tls_verify;
    fo.target.timeout = t.timeout;
    fo.queue_dir = options_.queue_dir;
    fo.queue.max_bytes = options_.queue_max_bytes;
    fo.queue.fsync = options_.queue_fsync;
    LENS_ASSIGN_OR_RETURN(auto f, Forwarder::Create(fo));
    forwarders_.push_back(std::move(f));
  }
  scraper_ = std::make_unique<LocalScraper>(this, &metrics_);
  if (options_.logs) {
    LogIngestOptions lo;
    lo.self_pod_prefixes = options_.self_pod_prefixes;
    logs_ = std::make_unique<LogIngest>(lo, store_,
                                        MakeStoreWorkloadResolver(store_));
  }
  return OkStatus();
}

Status Processor::Start() {
  {
    std::lock_guard lock(run_mu_);
    if (running_) return OkStatus();
    running_ = true;
    stopping_ = false;
  }
  Status st = RefreshOwnership();
  if (!st.ok()) {
    LENS_LOG(WARN).Field("error", st.message())
        << "ownership index: first load failed; series pass through "
           "unenriched until a refresh succeeds";
  }
  for (auto& f : forwarders_) f->Start();
  {
    std::lock_guard lock(tailer_mu_);
    if (tailer_) tailer_->Start();
  }
  refresher_ = std::thread([this] { RefreshLoop(); });
  scraper_->Start();
  return OkStatus();
}

void Processor::Stop() {
  {
    std::lock_guard lock(run_mu_);
    if (!running_) return;
    running_ = false;
    stopping_ = true;
  }
  run_cv_.notify_all();
  if (refresher_.joinable()) refresher_.join();
  if (scraper_) scraper_->Stop();  // its last request is queued below
  for (auto& f : forwarders_) f->Stop();
  {
    std::lock_guard lock(tailer_mu_);
    if (tailer_) tailer_->Stop();  // reads the files a last time
  }
  if (logs_) {
    Status st = logs_->Stop();
    if (!st.ok()) {
      LENS_LOG(ERROR).Field("error", st.message()) << "logs: final write";
    }
  }
}

// Follows the store every ownership_refresh, flushes buffered log records
// every second (or refresh, when shorter), prunes the sample history every
// ten minutes.
void Processor::RefreshLoop() {
  using Clock = std::chrono::steady_clock;
  Clock::time_point next_refresh = Clock::now() + options_.ownership_refresh;
  Clock::time_point next_prune = Clock::now();
  std::string last_error;
  std::unique_lock lock(run_mu_);
  while (!stopping_) {
    run_cv_.wait_for(
        lock, std::min<std::chrono::milliseconds>(std::chrono::seconds(1),
                                                  options_.ownership_refresh));
    if (stopping_) break;
    lock.unlock();
    const Clock::time_point now = Clock::now();
    if (now >= next_refresh) {
      next_refresh = now + options_.ownership_refresh;
      Status st = RefreshOwnership();
      if (!st.ok() && st.message() != last_error) {
        LENS_LOG(WARN).Field("error", st.message())
            << "ownership index: refresh failed; keeping the last one";
      }
      last_error = st.ok() ? "" : st.message();
      // A workload that ended: its training series end now.
      for (const std::string& uid : feed_.TakeEndedWorkloads()) {
        if (logs_) logs_->ForgetWorkload(uid);
      }
    }
    if (logs_) {
      Status st = logs_->Flush();
      if (!st.ok()) {
        LENS_LOG(ERROR).Field("error", st.message()) << "logs: flush";
      }
    }
    if (options_.sample_history && now >= next_prune) {
      next_prune = now + std::chrono::minutes(10);
      auto pruned = store_->samples().PruneSamples(
          NowMs() - options_.sample_retention.count());
      if (!pruned.ok()) {
        LENS_LOG(WARN).Field("error", pruned.status().message())
            << "sample history: prune failed";
      }
    }
    lock.lock();
  }
}

Status Processor::FollowLogFile(const std::string& path,
                                const std::string& workload_uid) {
  if (!logs_) {
    return FailedPreconditionError("the logs path is off (telemetry.logs)");
  }
  std::lock_guard lock(tailer_mu_);
  if (!tailer_) {
    tailer_ = std::make_unique<LogFileTailer>(logs_.get());
    bool running;
    {
      std::lock_guard run(run_mu_);
      running = running_;
    }
    if (running) tailer_->Start();
  }
  LENS_RETURN_IF_ERROR(tailer_->Add({path, workload_uid, {}}));
  if (workload_uid.empty()) {
    Status st = RegisterLogFileWorkload(
        store_, path,
        std::chrono::time_point_cast<std::chrono::microseconds>(
            std::chrono::system_clock::now()));
    if (!st.ok()) {
      LENS_LOG(WARN).Field("path", path).Field("error", st.message())
          << "logs: the log file's workload row was not written";
    }
  }
  return OkStatus();
}

Status Processor::AddLocalScrape(LocalScrapeTarget target) {
  return scraper_->Add(std::move(target));
}

Status Processor::RefreshOwnership() {
  std::lock_guard lock(refresh_mu_);
  return feed_.Refresh(std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now()));
}

std::unique_ptr<Processor::Worker> Processor::TakeWorker() {
  {
    std::lock_guard lock(pool_mu_);
    if (!pool_.empty()) {
      auto w = std::move(pool_.back());
      pool_.pop_back();
      return w;
    }
  }
  return std::make_unique<Worker>(enrich_);
}

void Processor::GiveBack(std::unique_ptr<Worker> worker) {
  // A worker that held a large request gives its memory back: the pool
  // keeps at most 16 workers of ordinary size.
  if (worker->request.buffer.capacity() > (size_t{4} << 20) ||
      worker->enriched.buffer.capacity() > (size_t{4} << 20) ||
      worker->encoder.proto_bytes() > (size_t{4} << 20)) {
    return;
  }
  std::lock_guard lock(pool_mu_);
  if (pool_.size() < 16) pool_.push_back(std::move(worker));
}

void Processor::Count(int http_status, const char* kind) {
  auto c = requests_->WithLabels({kind, std::to_string(http_status)});
  if (c.ok()) (*c)->Inc();
}

void Processor::Drop(const char* reason, uint64_t samples) {
  if (samples == 0) return;
  auto c = dropped_->WithLabels({reason});
  if (c.ok()) (*c)->Add(static_cast<double>(samples));
}

// The enriched request, read back, as the history's samples: the selected
// series only (the others are not what the history is for). A series the
// store refuses (labels too long for its index, a name twice) is left out
// and counted; the others are written.
Status Processor::AppendHistory(Worker& w) {
  // The enrichment added labels (and compat copies of series): room for it.
  RemoteWriteLimits limits = limits_;
  limits.max_uncompressed_bytes *= 4;
  limits.max_labels_per_series += 16;
  limits.max_series *= 2;
  limits.max_samples *= 2;
  LENS_RETURN_IF_ERROR(
      DecodeWriteRequest(w.encoder.proto(), limits, &w.enriched));
  w.history.clear();
  w.history_series.clear();  // where each series' samples start
  for (const WireSeries& s : w.enriched.series) {
    std::string_view name;
    for (const WireLabel& l : w.enriched.LabelsOf(s)) {
      if (l.name == "__name__") name = l.value;
    }
    if (name.empty() || !Selected(options_.series.metric_prefixes, name)) {
      continue;
    }
    std::vector<std::pair<std::string, std::string>> labels;
    for (const WireLabel& l : w.enriched.LabelsOf(s)) {
      if (l.name != "__name__") labels.emplace_back(l.name, l.value);
    }
    w.history_series.push_back(w.history.size());
    for (const WireSample& sample : w.enriched.SamplesOf(s)) {
      w.history.push_back(
          {std::string(name), labels, sample.timestamp_ms, sample.value});
    }
  }
  if (w.history.empty()) return OkStatus();
  SampleHistoryOptions ho;
  ho.resolution = options_.sample_resolution;
  ho.max_series = options_.sample_max_series;
  std::lock_guard lock(history_mu_);
  // Over max_series: the known series' samples are written, new series
  // refused; the request itself is fine, the refusal is counted
  // (dropped{reason="history_full"}) and logged at most once a minute.
  auto append = [&](std::span<const MetricSample> samples) {
    const SampleHistoryStats stats = store_->samples().stats();
    const uint64_t before = stats.samples_refused;
    Status st = store_->samples().AppendSamples(samples, ho);
    if (const uint64_t evicted =
            store_->samples().stats().series_evicted - stats.series_evicted) {
      history_evicted_->Add(static_cast<double>(evicted));
    }
    if (st.code() != StatusCode::kResourceExhausted) return st;
    Drop("history_full", store_->samples().stats().samples_refused - before);
    const int64_t now = NowMs();
    int64_t last = last_history_full_ms_.load();
    if (now - last >= 60000 &&
        last_history_full_ms_.compare_exchange_strong(last, now)) {
      LENS_LOG(WARN).Field("error", st.message())
          << "sample history full: samples of new series not kept "
             "(telemetry.sampleMaxSeries)";
    }
    return OkStatus();
  };
  Status st = append(w.history);
  if (st.code() == StatusCode::kInvalidArgument) {
    // One series spoiled the batch: again series by series, without it.
    st = OkStatus();
    w.history_series.push_back(w.history.size());
    for (size_t k = 0; k + 1 < w.history_series.size() && st.ok(); ++k) {
      const size_t from = w.history_series[k];
      const size_t n = w.history_series[k + 1] - from;
      st = append(std::span<const MetricSample>(w.history).subspan(from, n));
      if (st.code() == StatusCode::kInvalidArgument) {
        Drop("history_rejected", n);
        st = OkStatus();
      }
    }
  }
  if (st.ok()) history_samples_->Add(static_cast<double>(w.history.size()));
  return st;
}

IngestResult Processor::WriteRemote(std::string_view body,
                                    std::string_view content_type) {
  const auto started = std::chrono::steady_clock::now();
  IngestResult result;
  auto finish = [&](int status, std::string message, int retry_after = 0) {
    result.http_status = status;
    result.message = std::move(message);
    result.retry_after_seconds = retry_after;
    Count(status, "remote_write");
    return result;
  };
  bytes_in_->Add(static_cast<double>(body.size()));
  // Remote write 2.0 says so in its content type; it is not spoken here.
  if (content_type.find("io.prometheus.write.v2") != std::string_view::npos) {
    Drop("unsupported", 1);
    return finish(415,
                  "remote write 2.0 (io.prometheus.write.v2.Request) is not "
                  "supported; send remote write 1.0 "
                  "(prometheus.WriteRequest)");
  }
  // What the request declares it inflates to, within the limit, counts
  // against the one budget of decompressed bytes until it is done.
  size_t declared = 0;
  if (snappy::GetUncompressedLength(body.data(), body.size(), &declared) &&
      declared <= limits_.max_uncompressed_bytes) {
    size_t now = decoding_bytes_.load();
    do {
      if (now > 0 && now + declared > limits_.max_uncompressed_bytes) {
        Drop("busy", 1);
        return finish(503,
                      "busy decoding other requests (" + std::to_string(now) +
                          " bytes); retry shortly",
                      1);
      }
    } while (!decoding_bytes_.compare_exchange_weak(now, now + declared));
  } else {
    declared = 0;  // refused by the decoder below
  }
  struct Release {
    std::atomic<size_t>& in_flight;
    size_t bytes;
    ~Release() { in_flight -= bytes; }
  } release{decoding_bytes_, declared};
  std::unique_ptr<Worker> w = TakeWorker();
  Status st = DecodeRemoteWrite(body, limits_, &w->request);
  if (!st.ok()) {
    const bool size = st.code() == StatusCode::kResourceExhausted;
    Drop(size ? "too_large" : "bad_request", 1);
    GiveBack(std::move(w));
    return finish(size ? 413 : 400, st.message());
  }
  const uint64_t samples = w->request.samples.size();
  samples_in_->Add(static_cast<double>(samples));
  const std::shared_ptr<const OwnershipIndex> index = feed_.Current();
  const EnrichStats stats = w->enricher.Enrich(w->request, *index, &w->encoder);
  samples_enriched_->Add(static_cast<double>(stats.samples_enriched));
  series_split_->Add(static_cast<double>(stats.series_split));
  // The history first (it reads the encoder's request before Finish);
  // with forward targets it is a copy on the side and never fails the
  // request, without them it is where the samples go.
  Status history;
  if (options_.sample_history) history = AppendHistory(*w);
  const std::string out = w->encoder.Finish();
  GiveBack(std::move(w));
  if (!history.ok()) {
    history_failures_->Inc();
    const int64_t now = NowMs();
    int64_t last = last_history_error_ms_.load();
    if (now - last >= 10000 &&
        last_history_error_ms_.compare_exchange_strong(last, now)) {
      LENS_LOG(ERROR).Field("error", history.message())
          << "sample history: write failed";
    }
    if (forwarders_.empty()) {
      Drop("store_error", samples);
      return finish(500, "sample history: " + history.message());
    }
  }
  // A request no queue can ever hold is refused for good, not pushed back.
  if (!forwarders_.empty() && out.size() + 64 > options_.queue_max_bytes) {
    Drop("too_large", samples);
    return finish(413, "the enriched request (" + std::to_string(out.size()) +
                           " bytes) is larger than a forward queue "
                           "(queue_max_bytes)");
  }
  // Every queue has room, or none is written: a 503 makes the sender
  // retry the whole request, and a queue that took it would hold it twice.
  // One request checks and enqueues at a time, so another cannot fill a
  // queue between this one's check and its write (the senders only free
  // room meanwhile).
  std::lock_guard enqueue(enqueue_mu_);
  for (const auto& f : forwarders_) {
    if (!f->HasRoom(out.size())) {
      Drop("queue_full", samples);
      return finish(
          503, "forward queue for " + f->name() + " is full; retry later", 5);
    }
  }
  for (const auto& f : forwarders_) {
    st = f->Enqueue(out, samples);
    if (!st.ok()) {
      const bool full = st.code() == StatusCode::kResourceExhausted;
      Drop(full ? "queue_full" : "store_error", samples);
      return finish(full ? 503 : 500, f->name() + ": " + st.message(),
                    full ? 5 : 0);
    }
  }
  ingest_seconds_->Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count());
  return finish(204, "");
}

IngestResult Processor::IngestLogs(std::string_view body, LogBodyFormat format,
                                   Timestamp received_at) {
  IngestResult result;
  if (!logs_) {
    result.http_status = 404;
    result.message = "the logs path is off (telemetry.logs)";
  } else {
    Status st =
        logs_->Ingest(body,
                      format == LogBodyFormat::kJson ? LogFormat::kJson
                                                     : LogFormat::kJsonLines,
                      received_at);
    if (!st.ok()) {
      result.http_status = st.code() == StatusCode::kInvalidArgument     ? 400
                           : st.code() == StatusCode::kResourceExhausted ? 413
                                                                         : 500;
      result.message = st.message();
    }
  }
  Count(result.http_status, "logs");
  return result;
}

}  // namespace telemetry
}  // namespace lens
