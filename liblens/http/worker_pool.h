// The handler threads of the HTTP server.
#ifndef LENS_HTTP_WORKER_POOL_H_
#define LENS_HTTP_WORKER_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "lens/http.h"

namespace lens::http {

struct Task {
  uint64_t conn_id = 0;
  HttpRequest request;
  std::shared_ptr<const HttpHandler> handler;
  std::string route;  // the path or pattern the handler is registered under
  bool head_only = false;
  bool keep_alive = true;
};

// A blocking queue of handler calls, served by its own threads.
class WorkerPool {
 public:
  using Run = std::function<void(Task)>;
  WorkerPool(int threads, Run run) : run_(std::move(run)), threads_(threads) {}
  ~WorkerPool() { Stop(); }
  void Start() {
    for (int i = 0; i < threads_; ++i)
      workers_.emplace_back([this] { Loop(); });
  }
  void Push(Task task) {
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }
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
      }
      run_(std::move(task));
    }
  }
  const Run run_;
  const int threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> tasks_;  // GUARDED_BY(mu_)
  bool stopping_ = false;   // GUARDED_BY(mu_)
  std::vector<std::thread> workers_;
};

}  // namespace lens::http

#endif  // LENS_HTTP_WORKER_POOL_H_
