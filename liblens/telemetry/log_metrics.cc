#include "telemetry/log_metrics.h"

#include <algorithm>
#include <vector>

#include "core/metric_writer.h"

namespace lens::telemetry {
namespace {

constexpr std::string_view kSkipNames[] = {"self", "no_kubernetes",
                                           "no_message", "no_workload"};
constexpr std::string_view kErrorNames[] = {"malformed", "too_large",
                                            "truncated", "store", "dropped"};
constexpr std::string_view kStoredNames[] = {"iteration", "event", "validation",
                                             "memory_report"};

// From a line's time to its arrival: fluent-bit flushes every second or so,
// retries for minutes.
constexpr double kLatencyBuckets[] = {0.1, 0.25, 0.5, 1,   2.5, 5,
                                      10,  30,   60,  120, 300, 900};

}  // namespace

LogMetrics::LogMetrics(size_t max_nodes, size_t max_workloads)
    : max_nodes_(max_nodes),
      max_workloads_(std::max<size_t>(max_workloads, 1)),
      buckets_(std::make_shared<const std::vector<double>>(
          std::begin(kLatencyBuckets), std::end(kLatencyBuckets))) {}

Histogram* LogMetrics::Latency(std::string_view node) {
  std::lock_guard lock(mu_);
  auto it = latency_.find(node);
  if (it != latency_.end()) return it->second.get();
  if (latency_.size() >= max_nodes_) node = "";
  auto [pos, added] = latency_.try_emplace(std::string(node));
  if (added) pos->second = std::make_unique<Histogram>(buckets_);
  return pos->second.get();
}

void LogMetrics::Update(const WorkloadLabels& workload,
                        std::span<const IterationRecord> records,
                        Timestamp now) {
  if (records.empty()) return;
  std::lock_guard lock(mu_);
  if (ended_.find(workload.uid) != ended_.end()) return;
  auto [it, added] = workloads_.try_emplace(workload.uid);
  Latest& l = it->second;
  if (added) {
    l.labels = workload;
    if (workloads_.size() > max_workloads_) {
      // At the cap: the one seen least recently ends (a scan of at most
      // max_workloads, only when a new workload arrives at the cap).
      auto oldest = workloads_.end();
      for (auto w = workloads_.begin(); w != workloads_.end(); ++w) {
        if (w != it && (oldest == workloads_.end() ||
                        w->second.seen < oldest->second.seen)) {
          oldest = w;
        }
      }
      workloads_.erase(oldest);
    }
  }
  l.seen = now;
  for (const IterationRecord& r : records) {
    l.iteration = static_cast<double>(r.iteration);
    if (auto v = r.Get(IterationField::kLoss)) l.loss = v;
    if (auto v = r.Get(IterationField::kTflopsPerGpu)) l.tflops = v;
    if (auto v = r.Get(IterationField::kTokensPerSPerGpu)) l.tokens = v;
    if (auto v = r.Get(IterationField::kElapsedMs)) l.step_seconds = *v / 1000;
  }
}

void LogMetrics::Forget(std::string_view workload_uid, Timestamp now) {
  std::lock_guard lock(mu_);
  auto it = workloads_.find(workload_uid);
  if (it != workloads_.end()) workloads_.erase(it);
  ended_.insert_or_assign(std::string(workload_uid), now);
}

void LogMetrics::Expire(Timestamp now, std::chrono::microseconds ttl) {
  std::lock_guard lock(mu_);
  for (auto it = workloads_.begin(); it != workloads_.end();) {
    it = now - it->second.seen > ttl ? workloads_.erase(it) : std::next(it);
  }
  for (auto it = ended_.begin(); it != ended_.end();) {
    it = now - it->second > ttl ? ended_.erase(it) : std::next(it);
  }
}

void LogMetrics::Render(std::string* out) const {
  MetricWriter w(out);
  w.Family("lens_telemetry_log_requests_total",
           "Log requests received from fluent-bit", "counter");
  w.Sample({}, static_cast<double>(requests_.load()));
  w.Family("lens_telemetry_log_records_total",
           "Log records received from fluent-bit", "counter");
  w.Sample({}, static_cast<double>(records_.load()));
  w.Family("lens_telemetry_log_lines_total",
           "Log lines fed to the training-log parsers", "counter");
  w.Sample({}, static_cast<double>(lines_.load()));
  w.Family("lens_telemetry_log_records_skipped_total",
           "Log records not parsed, by reason", "counter");
  for (size_t i = 0; i < skipped_.size(); ++i) {
    w.Sample({{"reason", kSkipNames[i]}},
             static_cast<double>(skipped_[i].load()));
  }
  w.Family("lens_telemetry_log_stored_total",
           "Training rows written to the store from logs, by kind", "counter");
  for (size_t i = 0; i < stored_.size(); ++i) {
    w.Sample({{"kind", kStoredNames[i]}},
             static_cast<double>(stored_[i].load()));
  }
  w.Family("lens_telemetry_log_errors_total",
           "Log requests, messages and store writes that failed, by reason",
           "counter");
  for (size_t i = 0; i < errors_.size(); ++i) {
    w.Sample({{"reason", kErrorNames[i]}},
             static_cast<double>(errors_[i].load()));
  }
  w.Family("lens_telemetry_log_streams",
           "Container log streams with a live training-log parser", "gauge");
  w.Sample({}, static_cast<double>(streams_.load()));

  std::lock_guard lock(mu_);
  w.Family("lens_telemetry_log_latency_seconds",
           "Arrival time minus the log record's time, per node", "histogram");
  for (const auto& [node, h] : latency_) {
    w.HistogramSeries({{"node", node}}, h->Snapshot());
  }
  struct Gauge {
    const char* name;
    const char* help;
    std::optional<double> Latest::*value;
  };
  static constexpr Gauge kGauges[] = {
      {"lens_training_iteration", "Latest training iteration in the logs",
       &Latest::iteration},
      {"lens_training_loss", "Latest training loss in the logs", &Latest::loss},
      {"lens_training_tflops_per_gpu",
       "Latest model TFLOP/s per GPU in the logs", &Latest::tflops},
      {"lens_training_tokens_per_second_per_gpu",
       "Latest tokens per second per GPU in the logs", &Latest::tokens},
      {"lens_training_step_seconds",
       "Latest time of one training iteration in the logs (seconds)",
       &Latest::step_seconds},
  };
  for (const Gauge& g : kGauges) {
    w.Family(g.name, g.help, "gauge");
    for (const auto& [uid, l] : workloads_) {
      const std::optional<double>& v = l.*g.value;
      if (!v) continue;
      w.Sample({{"workload_uid", uid},
                {"workload_name", l.labels.name},
                {"workload_kind", l.labels.kind},
                {"namespace", l.labels.namespace_name}},
               *v);
    }
  }
}

}  // namespace lens::telemetry
