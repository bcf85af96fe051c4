// One thread scraping the local targets on their intervals. A scrape is
// rendered, parsed, grouped into series and encoded as one remote-write
// request, so it meets the same enrichment, history and forwarding as a
// request from Prometheus would.
#include "telemetry/local_scrape.h"

#include <algorithm>
#include <map>

#include "lens/log.h"
#include "telemetry/exposition.h"
#include "telemetry/remote_write.h"

namespace lens::telemetry {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The samples as one remote-write body: series keyed by their sorted labels
// (__name__ first by byte order, as remote write wants).
std::string Encode(std::vector<MetricSample>& samples,
                   const LocalScrapeTarget& target) {
  using Labels = std::vector<std::pair<std::string, std::string>>;
  std::map<Labels, std::vector<WireSample>> series;
  for (MetricSample& s : samples) {
    Labels labels = std::move(s.labels);
    for (const auto& extra : target.labels) {
      auto same = [&](const auto& l) { return l.first == extra.first; };
      labels.erase(std::remove_if(labels.begin(), labels.end(), same),
                   labels.end());
      if (!extra.second.empty()) labels.push_back(extra);
    }
    labels.emplace_back("__name__", std::move(s.metric));
    std::sort(labels.begin(), labels.end());
    series[std::move(labels)].push_back({s.value, s.timestamp_ms});
  }
  RemoteWriteEncoder encoder;
  std::vector<WireLabel> wire;
  for (const auto& [labels, points] : series) {
    wire.clear();
    for (const auto& [name, value] : labels) wire.push_back({name, value});
    encoder.AddSeries(wire, points);
  }
  return encoder.Finish();
}

}  // namespace

LocalScraper::LocalScraper(TelemetryProcessor* sink, Registry* metrics)
    : sink_(sink) {
  auto family = metrics->AddCounterFamily(
      "lens_telemetry_local_scrapes_total",
      "Scrapes of this process's own metrics (lens up), by result.",
      {"job", "result"});
  if (family.ok()) scrapes_ = *family;
}

LocalScraper::~LocalScraper() { Stop(); }

Status LocalScraper::Add(LocalScrapeTarget target) {
  if (target.job.empty()) return InvalidArgumentError("local scrape: no job");
  if (!target.render) {
    return InvalidArgumentError("local scrape " + target.job + ": no render");
  }
  if (target.interval < std::chrono::milliseconds(100)) {
    return InvalidArgumentError("local scrape " + target.job +
                                ": interval under 100ms");
  }
  Target t{std::move(target), std::chrono::steady_clock::now(), {}, {}};
  if (scrapes_ != nullptr) {
    auto ok = scrapes_->WithLabels({t.spec.job, "ok"});
    auto failed = scrapes_->WithLabels({t.spec.job, "failed"});
    if (ok.ok()) t.ok = *ok;
    if (failed.ok()) t.failed = *failed;
  }
  {
    std::lock_guard lock(mu_);
    targets_.push_back(std::move(t));
  }
  cv_.notify_all();
  return OkStatus();
}

void LocalScraper::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void LocalScraper::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  thread_ = std::thread();
}

void LocalScraper::ScrapeAllNow() {
  std::lock_guard lock(mu_);
  for (Target& t : targets_) Scrape(t);
}

void LocalScraper::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto wake = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (const Target& t : targets_) wake = std::min(wake, t.next);
    cv_.wait_until(lock, wake);
    if (stopping_) break;
    // Scraped with mu_ held: one scrape at a time (thread or caller),
    // Add() waits for a scrape in progress, targets_ never moves under it.
    const auto now = std::chrono::steady_clock::now();
    for (Target& t : targets_) {
      if (now < t.next) continue;
      t.next = now + t.spec.interval;
      Scrape(t);
    }
  }
}

void LocalScraper::Scrape(Target& target) {
  const LocalScrapeTarget& spec = target.spec;
  std::vector<MetricSample> samples;
  Status st =
      ParseExposition(spec.render(), NowMs(), spec.metric_prefixes, &samples);
  if (st.ok() && !samples.empty()) {
    IngestResult r =
        sink_->WriteRemote(Encode(samples, spec), "application/x-protobuf");
    if (r.http_status >= 300) {
      st = UnavailableError(std::to_string(r.http_status) + " " + r.message);
    }
  }
  if (st.ok()) {
    if (target.ok) target.ok->Inc();
    return;
  }
  if (target.failed) target.failed->Inc();
  LENS_LOG(WARN).Field("job", spec.job).Field("error", st.message())
      << "local scrape failed";
}

}  // namespace lens::telemetry
