// The local scrape (TelemetryProcessor::AddLocalScrape): metrics renderers
// of this process read on their intervals, on one thread, and written
// through the processor's remote-write path.
#ifndef LENS_TELEMETRY_LOCAL_SCRAPE_H_
#define LENS_TELEMETRY_LOCAL_SCRAPE_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "core/metrics.h"
#include "telemetry/telemetry.h"

namespace lens::telemetry {

class LocalScraper {
 public:
  // `sink` takes each scrape's request and outlives the scraper; the
  // counters go to `metrics`.
  LocalScraper(TelemetryProcessor* sink, Registry* metrics);
  ~LocalScraper();  // stops

  // InvalidArgument for a target without job or render, or an interval
  // under 100ms.
  Status Add(LocalScrapeTarget target);
  void Start();
  void Stop();  // joins the thread; idempotent
  // Scrapes every target now, on the caller's thread (tests). Scrapes are
  // serialised.
  void ScrapeAllNow();

 private:
  struct Target {
    LocalScrapeTarget spec;
    std::chrono::steady_clock::time_point next;
    std::shared_ptr<Counter> ok, failed;
  };
  void Loop();
  void Scrape(Target& target);

  TelemetryProcessor* sink_;
  CounterFamily* scrapes_ = nullptr;  // {job, result}
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Target> targets_;  // GUARDED_BY(mu_)
  bool stopping_ = false;        // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_LOCAL_SCRAPE_H_
