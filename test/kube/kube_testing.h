// Shared by the Kubernetes client tests: objects in their real shapes and a
// handler that records what an informer told it.
#ifndef LENS_TEST_KUBE_KUBE_TESTING_H_
#define LENS_TEST_KUBE_KUBE_TESTING_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "kube_api_server.h"
#include "lens/kube.h"

namespace lens::kubetest {

// A pod as a controller creates it: one container, `gpus` AMD GPUs (none
// when 0), on `node` ("" unscheduled).
inline std::string PodJson(const std::string& ns, const std::string& name,
                           int gpus = 0, const std::string& node = "",
                           const std::string& phase = "Pending") {
  std::string resources = gpus > 0
                              ? R"("resources":{"limits":{"amd.com/gpu":")" +
                                    std::to_string(gpus) +
                                    R"("},"requests":{"amd.com/gpu":")" +
                                    std::to_string(gpus) + R"("}},)"
                              : "";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":")" + ns + R"(","labels":{"app":"train"}},"spec":{)" +
         (node.empty() ? "" : R"("nodeName":")" + node + R"(",)") +
         R"("containers":[{"name":"main","image":"rocm/pytorch:latest",)" +
         resources +
         R"("command":["python","train.py"]}]},"status":{"phase":")" + phase +
         R"("}})";
}

// The connection to `server` as a test client uses it.
inline KubeConnection ConnectionTo(const test::KubeApiServer& server,
                                   const std::string& token = "") {
  KubeConnection c;
  c.server = server.url();
  c.token = token;
  if (c.server.rfind("https://", 0) == 0) c.ca_file = server.CaFile();
  c.origin = "test";
  return c;
}

// Records an informer's calls as lines: "add ns/name", "update ns/name",
// "delete ns/name" (" gone" when seen_gone), "synced".
class RecordingHandler : public KubeEventHandler {
 public:
  void OnAdd(const KubeObject& o) override {
    Record("add " + o.namespace_name + "/" + o.name, o);
  }
  void OnUpdate(const KubeObject& old_object,
                const KubeObject& new_object) override {
    Record("update " + new_object.namespace_name + "/" + new_object.name,
           new_object, &old_object);
  }
  void OnDelete(const KubeObject& o, bool seen_gone) override {
    Record("delete " + o.namespace_name + "/" + o.name +
               (seen_gone ? " gone" : ""),
           o);
  }
  void OnSynced() override { Record("synced", {}); }

  std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }
  std::vector<KubeObject> objects() const {
    std::lock_guard lock(mu_);
    return objects_;
  }
  std::vector<KubeObject> old_objects() const {
    std::lock_guard lock(mu_);
    return old_objects_;
  }
  // Waits until `done(lines)` holds; false after `timeout`.
  bool WaitFor(const std::function<bool(const std::vector<std::string>&)>& done,
               std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, timeout, [&] { return done(lines_); });
  }
  // Waits for `count` lines equal to `line`.
  bool WaitForLine(
      const std::string& line, size_t count = 1,
      std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    return WaitFor(
        [&](const std::vector<std::string>& lines) {
          return static_cast<size_t>(
                     std::count(lines.begin(), lines.end(), line)) >= count;
        },
        timeout);
  }

 private:
  void Record(std::string line, const KubeObject& o,
              const KubeObject* old_object = nullptr) {
    std::lock_guard lock(mu_);
    lines_.push_back(std::move(line));
    objects_.push_back(o);
    old_objects_.push_back(old_object ? *old_object : KubeObject{});
    changed_.notify_all();
  }

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::string> lines_;
  std::vector<KubeObject> objects_;
  std::vector<KubeObject> old_objects_;
};

}  // namespace lens::kubetest

#endif  // LENS_TEST_KUBE_KUBE_TESTING_H_
