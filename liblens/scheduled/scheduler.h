// Runs named jobs at intervals, each on its own thread: only while leading,
// never two runs of one job at once (a run that overruns makes the ticks it
// covered skipped), and keeps per-job counters for /jobs and /metrics.
#ifndef LENS_SCHEDULED_SCHEDULER_H_
#define LENS_SCHEDULED_SCHEDULER_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/metrics.h"
#include "lens/status.h"

namespace lens::scheduled {

using SteadyTime = std::chrono::steady_clock::time_point;

// A job. `run` gets the deadline of its run (start + timeout) and should
// give up on slow work past it; a run that returns after it is a failure
// ("exceeded its timeout") whatever it returned.
struct JobSpec {
  std::string name;
  std::chrono::milliseconds interval{1000};
  std::chrono::milliseconds timeout{1000};
  std::function<Status(SteadyTime deadline)> run;
};

// One job's record. Plain value.
struct JobState {
  std::string name;
  std::chrono::milliseconds interval{0};
  uint64_t runs = 0;
  uint64_t failures = 0;
  uint64_t skipped = 0;  // ticks that came while a run was still going
  bool running = false;
  std::optional<std::chrono::system_clock::time_point> last_start;
  std::chrono::nanoseconds last_duration{0};
  std::string last_error;  // "" after a success
  std::optional<std::chrono::system_clock::time_point> last_success;
  HistogramSnapshot durations;  // seconds
};

class Scheduler {
 public:
  explicit Scheduler(std::vector<JobSpec> jobs);
  ~Scheduler();  // stops
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // One thread per job; the first run is at once (when leading), then every
  // interval. `leading` empty: always.
  void Start(std::function<bool()> leading);
  // Wakes the threads and joins them (a run in progress finishes first).
  void Stop();
  // Runs `name` now on this thread, waiting for a run in progress first.
  // NotFound for an unknown name.
  Status RunOnce(std::string_view name);

  std::vector<JobState> States() const;

 private:
  struct Job;
  void Loop(Job* job);
  Status RunJob(Job* job);

  std::vector<std::unique_ptr<Job>> jobs_;
  std::function<bool()> leading_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;
};

}  // namespace lens::scheduled

#endif  // LENS_SCHEDULED_SCHEDULER_H_
