// A thread that runs one task at a time on request: the node agent keeps one
// per collector so a cycle's collectors run side by side (a slow kubelet call
// never delays GPU sampling by more than its own time limit, and GPU and RDMA
// reads overlap).
#ifndef LENS_AGENT_WORKER_H_
#define LENS_AGENT_WORKER_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace lens::agent {

class Worker {
 public:
  Worker() : thread_([this] { Loop(); }) {}
  ~Worker() {
    {
      std::lock_guard lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts `task` on the worker. The previous task must have been waited for.
  void Post(std::function<void()> task) {
    {
      std::lock_guard lock(mu_);
      task_ = std::move(task);
      pending_ = true;
    }
    cv_.notify_all();
  }
  // Blocks until the posted task has finished.
  void Wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return !pending_; });
  }

 private:
  void Loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return quit_ || (pending_ && task_); });
      if (quit_) return;
      std::function<void()> task = std::move(task_);
      task_ = nullptr;
      lock.unlock();
      task();
      lock.lock();
      pending_ = false;
      cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> task_;  // GUARDED_BY(mu_)
  bool pending_ = false;        // GUARDED_BY(mu_)
  bool quit_ = false;           // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace lens::agent

#endif  // LENS_AGENT_WORKER_H_
