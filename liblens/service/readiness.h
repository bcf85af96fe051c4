// Readiness from a background check: a thread runs the check now and then
// and /readyz answers from the last result, so a probe never waits on a
// database or a remote server (a hung store must not hold the thread that
// also serves scrapes and liveness). Internal to the service area.
#ifndef LENS_SERVICE_READINESS_H_
#define LENS_SERVICE_READINESS_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "lens/status.h"

namespace lens::service {

// Thread-safe.
class Readiness {
 public:
  using Check = std::function<Status()>;
  // `check` runs every `interval` on the checker's thread; a result older
  // than `stale_after` (a check that hangs) reads as not ready.
  Readiness(Check check, std::chrono::milliseconds interval,
            std::chrono::milliseconds stale_after);
  ~Readiness() { Stop(); }
  Readiness(const Readiness&) = delete;
  Readiness& operator=(const Readiness&) = delete;

  // Starts the thread; the first check runs at once. Call once.
  void Start();
  // Stops the thread; a check in flight runs to its own end. Idempotent.
  void Stop();
  // Runs the check on the caller's thread and keeps its result (for the
  // first answer before serving, and for tests).
  void CheckNow();

  // OK while the last check passed and is fresh; Unavailable with the reason
  // otherwise (not checked yet, the check's error, or how long no check has
  // finished). Never blocks on the check: a ServiceHost's `ready`.
  Status State() const;

 private:
  void Run();
  const Check check_;
  const std::chrono::milliseconds interval_;
  const std::chrono::milliseconds stale_after_;
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;                              // GUARDED_BY(mu_)
  bool checked_ = false;                           // GUARDED_BY(mu_)
  Status last_;                                    // GUARDED_BY(mu_)
  std::chrono::steady_clock::time_point last_at_;  // GUARDED_BY(mu_)
};

}  // namespace lens::service

#endif  // LENS_SERVICE_READINESS_H_
