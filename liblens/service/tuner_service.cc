// lens-tuner composed once: the spec checked and applied every interval,
// drift counted and logged, /metrics, /healthz and /readyz over HTTP.
#include "service/tuner_service.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <utility>

#include "core/metric_writer.h"
#include "core/metrics.h"
#include "lens/log.h"
#include "service/service_host.h"

namespace lens {
namespace {

// One setting as the checks have seen it.
struct SettingState {
  bool in_sync = false;  // after the last check's apply
  uint64_t drift = 0;
};

double NowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct TunerService::Impl {
  TunerServiceOptions options;
  Registry metrics;  // the HTTP server's requests; outlives it

  std::mutex check_mu;  // one check at a time
  mutable std::mutex mu;
  std::condition_variable wake;
  bool stopping = false;  // GUARDED_BY(mu)
  // (kind, key) -> state, in plan order by kind then key.
  std::map<std::pair<TuningKind, std::string>, SettingState>
      settings;             // GUARDED_BY(mu)
  uint64_t checks = 0;      // GUARDED_BY(mu)
  uint64_t applied = 0;     // GUARDED_BY(mu)
  uint64_t errors = 0;      // GUARDED_BY(mu)
  double last_check_s = 0;  // GUARDED_BY(mu)

  TuningCheck Check();
  std::string RenderMetrics() const;

  // Declared last: stops (its thread joined) before the rest goes.
  std::unique_ptr<service::ServiceHost> host;
};

TuningCheck TunerService::Impl::Check() {
  std::lock_guard check_lock(check_mu);
  TuningCheck result;
  StatusOr<TuningPlan> plan = PlanTuning(options.spec);
  if (!plan.ok()) {  // the spec was validated at start: not expected
    LENS_LOG(ERROR).Field("error", plan.status().message()) << "tuner plan";
    std::lock_guard lock(mu);
    ++errors;
    ++checks;
    last_check_s = NowSeconds();
    result.errors = 1;
    return result;
  }
  result.settings = plan->settings.size();
  std::map<std::pair<TuningKind, std::string>, bool> now;
  {
    std::lock_guard lock(mu);
    for (const TuningSetting& s : plan->settings) {
      auto it = settings.find({s.kind, s.key});
      const bool drifted =
          !s.in_sync && it != settings.end() && it->second.in_sync;
      if (drifted) {
        ++it->second.drift;
        ++result.drifted;
        LENS_LOG(WARN)
                .Field("kind", TuningKindName(s.kind))
                .Field("key", s.key)
                .Field("desired", s.desired)
                .Field("found", s.found)
            << "tuner drift";
      }
      now[{s.kind, s.key}] = s.in_sync;
      if (!s.error.empty()) {
        ++result.errors;
        LENS_LOG(ERROR)
                .Field("kind", TuningKindName(s.kind))
                .Field("key", s.key)
                .Field("error", s.error)
            << "tuner cannot read a setting";
      }
    }
  }
  for (const TuningOutcome& o : ApplyTuning(options.spec, *plan)) {
    const TuningSetting& s = o.setting;
    now[{s.kind, s.key}] = o.status.ok();
    if (o.status.ok()) {
      ++result.applied;
      LENS_LOG(INFO)
              .Field("kind", TuningKindName(s.kind))
              .Field("key", s.key)
              .Field("from", s.found)
              .Field("to", s.desired)
          << "tuner applied";
    } else {
      ++result.errors;
      LENS_LOG(ERROR)
              .Field("kind", TuningKindName(s.kind))
              .Field("key", s.key)
              .Field("error", o.status.message())
          << "tuner cannot apply";
    }
  }
  std::lock_guard lock(mu);
  for (const auto& [id, in_sync] : now) settings[id].in_sync = in_sync;
  ++checks;
  applied += result.applied;
  errors += result.errors;
  last_check_s = NowSeconds();
  return result;
}

std::string TunerService::Impl::RenderMetrics() const {
  std::string out;
  MetricWriter w(&out);
  std::lock_guard lock(mu);
  const TuningSpec& spec = options.spec;
  w.Family("lens_tuner_info", "The roots lens-tuner manages.", "gauge");
  w.Sample({{"proc_root", spec.proc_root},
            {"etc_root", spec.etc_root},
            {"persist", spec.persist ? "true" : "false"}},
           1);
  w.Family("lens_tuner_setting_in_sync",
           "1 when the setting had its desired value after the last check.",
           "gauge");
  for (const auto& [id, state] : settings) {
    w.Sample({{"kind", TuningKindName(id.first)}, {"key", id.second}},
             state.in_sync ? 1 : 0);
  }
  w.Family("lens_tuner_drift_total",
           "Times a setting in sync was found changed behind the tuner's "
           "back.",
           "counter");
  for (const auto& [id, state] : settings) {
    w.Sample({{"kind", TuningKindName(id.first)}, {"key", id.second}},
             static_cast<double>(state.drift));
  }
  w.Family("lens_tuner_checks_total", "Checks run.", "counter");
  w.Sample({}, static_cast<double>(checks));
  w.Family("lens_tuner_applied_total", "Settings written successfully.",
           "counter");
  w.Sample({}, static_cast<double>(applied));
  w.Family("lens_tuner_apply_errors_total",
           "Settings that could not be read or written.", "counter");
  w.Sample({}, static_cast<double>(errors));
  w.Family("lens_tuner_last_check_timestamp_seconds",
           "When the last check finished (Unix seconds).", "gauge");
  w.Sample({}, last_check_s);
  return out;
}

TunerService::TunerService() : impl_(std::make_unique<Impl>()) {}
TunerService::~TunerService() { Stop(); }

StatusOr<std::unique_ptr<TunerService>> TunerService::Start(
    const TunerServiceOptions& options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<TunerService> service(new TunerService());
  Impl& s = *service->impl_;
  s.options = options;
  Impl* impl = &s;
  service::ServiceHost::Options host;
  host.http = options.http;
  host.http.metrics = &s.metrics;
  host.metrics = [impl] {
    return impl->RenderMetrics() + impl->metrics.Render();
  };
  LENS_ASSIGN_OR_RETURN(s.host, service::ServiceHost::Create(std::move(host)));
  s.host->AddThread(
      "tuning checks",
      [impl] {
        std::unique_lock lock(impl->mu);
        while (!impl->wake.wait_for(lock, impl->options.interval,
                                    [impl] { return impl->stopping; })) {
          lock.unlock();
          impl->Check();
          lock.lock();
        }
        return OkStatus();
      },
      [impl] {
        std::lock_guard lock(impl->mu);
        impl->stopping = true;
        impl->wake.notify_all();
      });
  // The first check before serving: /metrics never shows a node unchecked.
  s.Check();
  LENS_RETURN_IF_ERROR(s.host->Start());
  return service;
}

TuningCheck TunerService::CheckNow() { return impl_->Check(); }

void TunerService::Stop() {
  if (impl_->host) impl_->host->Stop();
}

std::string TunerService::http_url() const { return impl_->host->url(); }

}  // namespace lens
