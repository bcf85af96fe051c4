// The handler threads of the HTTP server.
#ifndef LENS_HTTP_WORKER_POOL_H_
#define LENS_HTTP_WORKER_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/metrics.h"
#include "http/http.h"

namespace lens::http {

struct Task {
  uint64_t conn_id = 0;
  HttpRequest request;
  std::shared_ptr<const HttpHandler> handler;
  std::string route;  // the path or pattern the handler is registered under
  bool head_only = false;
  bool keep_alive = true;
  // Set once the connection has closed: the call is dropped, not run.
  std::shared_ptr<const std::atomic<bool>> gone;
  // The body's share of the server's body budget, released with the task.
  std::shared_ptr<void> body_reservation;
};

// A bounded queue of handler calls, served by its own threads. Push() is
// called from one thread (the event loop); the workers only take.
class WorkerPool {
 public:
  using Run = std::function<void(Task)>;
  WorkerPool(int threads, size_t capacity, Run run)
      : run_(std::move(run)), threads_(threads), capacity_(capacity) {}
  ~WorkerPool() { Stop(); }
  void Start() {
    for (int i = 0; i < threads_; ++i)
      workers_.emplace_back([this] { Loop(); });
  }
  // Where the queue's depth is kept as it changes (before Start()).
  void SetDepthGauge(std::shared_ptr<Gauge> gauge) {
    depth_ = std::move(gauge);
  }
  // Whether Push() would be refused: `capacity` calls already wait.
  bool Full() const { return queued_.load() >= capacity_; }
  // Calls waiting for a thread (not those running).
  size_t queued() const { return queued_.load(); }
  // Queues `task`; false (task untouched) when full.
  bool Push(Task& task) {
    {
      std::lock_guard lock(mu_);
      if (tasks_.size() >= capacity_) return false;
      tasks_.push_back(std::move(task));
      queued_.store(tasks_.size());
      if (depth_) depth_->Set(static_cast<double>(tasks_.size()));
    }
    cv_.notify_one();
    return true;
  }
  // Runs what is queued (a task whose connection is gone is dropped by
  // `run`), then joins the threads.
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_)
      if (t.joinable()) t.join();
    workers_.clear();
  }

 private:
  void Loop() {
    for (;;) {
      Task task;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
        queued_.store(tasks_.size());
        if (depth_) depth_->Set(static_cast<double>(tasks_.size()));
      }
      run_(std::move(task));
    }
  }
  const Run run_;
  const int threads_;
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> tasks_;  // GUARDED_BY(mu_)
  std::atomic<size_t> queued_{0};
  std::shared_ptr<Gauge> depth_;
  bool stopping_ = false;  // GUARDED_BY(mu_)
  std::vector<std::thread> workers_;
};

}  // namespace lens::http

#endif  // LENS_HTTP_WORKER_POOL_H_
