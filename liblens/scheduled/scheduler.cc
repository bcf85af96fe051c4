#include "scheduled/scheduler.h"

#include "lens/log.h"

namespace lens::scheduled {
namespace {

std::shared_ptr<const std::vector<double>> DurationBounds() {
  static const auto bounds =
      std::make_shared<const std::vector<double>>(std::vector<double>{
          0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60});
  return bounds;
}

}  // namespace

struct Scheduler::Job {
  explicit Job(JobSpec s) : spec(std::move(s)), durations(DurationBounds()) {
    state.name = spec.name;
    state.interval = spec.interval;
  }
  JobSpec spec;
  std::mutex run_mu;    // one run at a time (the loop and RunOnce)
  JobState state;       // GUARDED_BY(Scheduler::mu_), but durations
  Histogram durations;  // thread-safe itself
};

Scheduler::Scheduler(std::vector<JobSpec> jobs) {
  for (JobSpec& s : jobs) jobs_.push_back(std::make_unique<Job>(std::move(s)));
}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Start(std::function<bool()> leading) {
  std::lock_guard lock(mu_);
  if (!threads_.empty()) return;
  leading_ = std::move(leading);
  stopping_ = false;
  for (auto& job : jobs_) {
    threads_.emplace_back([this, j = job.get()] { Loop(j); });
  }
}

void Scheduler::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  wake_.notify_all();
  for (std::thread& t : threads) t.join();
}

void Scheduler::Loop(Job* job) {
  using Clock = std::chrono::steady_clock;
  SteadyTime next = Clock::now();
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (!wake_.wait_until(lock, next, [this] { return stopping_; }) &&
        !stopping_) {
      const bool lead = !leading_ || leading_();
      lock.unlock();
      if (lead) (void)RunJob(job);
      lock.lock();
      // Ticks that passed during the run are skipped, not queued.
      const SteadyTime now = Clock::now();
      next += job->spec.interval;
      while (next <= now) {
        next += job->spec.interval;
        if (lead) ++job->state.skipped;
      }
    }
  }
}

Status Scheduler::RunJob(Job* job) {
  std::lock_guard run(job->run_mu);
  const auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu_);
    job->state.running = true;
    job->state.last_start = std::chrono::system_clock::now();
  }
  Status st;
  try {
    st = job->spec.run(start + job->spec.timeout);
  } catch (const std::exception& e) {
    st = InternalError(std::string("threw: ") + e.what());
  }
  const auto took = std::chrono::steady_clock::now() - start;
  if (st.ok() && took > job->spec.timeout) {
    st = DeadlineExceededError("exceeded its timeout of " +
                               std::to_string(job->spec.timeout.count()) +
                               " ms");
  }
  job->durations.Observe(std::chrono::duration<double>(took).count());
  std::lock_guard lock(mu_);
  JobState& s = job->state;
  s.running = false;
  ++s.runs;
  s.last_duration = took;
  if (st.ok()) {
    s.last_error.clear();
    s.last_success = std::chrono::system_clock::now();
  } else {
    ++s.failures;
    // Logged when the error changes, not every interval.
    if (s.last_error != st.message()) {
      LENS_LOG(WARN).Field("job", s.name).Field("error", st.message())
          << "job failed";
    }
    s.last_error = st.message();
  }
  return st;
}

Status Scheduler::RunOnce(std::string_view name) {
  for (auto& job : jobs_) {
    if (job->spec.name == name) return RunJob(job.get());
  }
  return NotFoundError("no job named \"" + std::string(name) + "\"");
}

std::vector<JobState> Scheduler::States() const {
  std::vector<JobState> out;
  std::lock_guard lock(mu_);
  for (const auto& job : jobs_) {
    out.push_back(job->state);
    out.back().durations = job->durations.Snapshot();
  }
  return out;
}

}  // namespace lens::scheduled
