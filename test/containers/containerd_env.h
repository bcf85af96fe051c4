// Shared by the tests that need a real containerd: one private containerd
// per test binary (a global test environment; register it in main()) with
// the busybox image imported, and a recorder of tracker changes.
#ifndef LENS_TEST_CONTAINERS_CONTAINERD_ENV_H_
#define LENS_TEST_CONTAINERS_CONTAINERD_ENV_H_

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "containerd_harness.h"
#include "lens/containers.h"

namespace lens::test {

using std::chrono::milliseconds;
using std::chrono::seconds;

inline const std::string kBusyboxImage = "lens.test/busybox:1";

// One containerd for the whole binary: starting one takes a second.
inline ContainerdServer* g_containerd = nullptr;
inline std::string g_skip;

class ContainerdEnv : public ::testing::Environment {
 public:
  void SetUp() override {
    auto server = ContainerdServer::Start();
    if (!server.ok()) {
      g_skip = server.status().message();
      return;
    }
    server_ = std::move(*server);
    Status st = server_->ImportBusyboxImage(kCriNamespace, kBusyboxImage);
    ASSERT_TRUE(st.ok()) << st;
    g_containerd = server_.get();
  }
  void TearDown() override {
    g_containerd = nullptr;
    if (server_) (void)server_->Stop();
  }

 private:
  std::unique_ptr<ContainerdServer> server_;
};

// Records every change; waits for one that matches.
class Recorder {
 public:
  void Add(const ContainerChange& c) {
    std::lock_guard lock(mu_);
    changes_.push_back(c);
    cv_.notify_all();
  }
  // The first change of `id` with `type` (waiting up to `timeout`).
  std::optional<ContainerChange> Wait(const std::string& id,
                                      const std::string& type,
                                      milliseconds timeout = seconds(10)) {
    std::unique_lock lock(mu_);
    std::optional<ContainerChange> found;
    cv_.wait_for(lock, timeout, [&] {
      for (const auto& c : changes_) {
        if (c.event.container_id == id &&
            ToString(c.event.event_type) == type) {
          found = c;
          return true;
        }
      }
      return false;
    });
    return found;
  }
  std::vector<std::string> Types(const std::string& id) {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const auto& c : changes_) {
      if (c.event.container_id == id)
        out.emplace_back(ToString(c.event.event_type));
    }
    return out;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ContainerChange> changes_;
};

}  // namespace lens::test

#endif  // LENS_TEST_CONTAINERS_CONTAINERD_ENV_H_
