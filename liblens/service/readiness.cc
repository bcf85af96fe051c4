// Readiness from a background check (readiness.h).
#include "service/readiness.h"

namespace lens::service {

Readiness::Readiness(Check check, std::chrono::milliseconds interval,
                     std::chrono::milliseconds stale_after)
    : check_(std::move(check)),
      interval_(interval),
      stale_after_(stale_after) {}

void Readiness::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Readiness::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Readiness::CheckNow() {
  Status st = check_();
  std::lock_guard lock(mu_);
  last_ = std::move(st);
  last_at_ = std::chrono::steady_clock::now();
  checked_ = true;
}

void Readiness::Run() {
  for (;;) {
    CheckNow();
    std::unique_lock lock(mu_);
    if (wake_.wait_for(lock, interval_, [&] { return stop_; })) return;
  }
}

Status Readiness::State() const {
  std::lock_guard lock(mu_);
  const auto age = std::chrono::steady_clock::now() - last_at_;
  if (!checked_) return UnavailableError("not checked yet");
  if (age > stale_after_) {
    return UnavailableError(
        "no check finished for " +
        std::to_string(
            std::chrono::duration_cast<std::chrono::seconds>(age).count()) +
        "s (last: " + (last_.ok() ? std::string("ok") : last_.message()) + ")");
  }
  return last_.ok() ? OkStatus() : UnavailableError(last_.message());
}

}  // namespace lens::service
