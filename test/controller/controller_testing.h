// Shared by the controller's test files: the fixture (an in-process API
// server, a client and a store on SQLite or PostgreSQL) and helpers that
// load test/fixtures/kube and wait for rows.
#ifndef LENS_TEST_CLUSTER_CONTROLLER_TESTING_H_
#define LENS_TEST_CLUSTER_CONTROLLER_TESTING_H_

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "controller/controller.h"
#include "kube_api_server.h"
#include "lens/kube.h"
#include "lens/store.h"
#include "postgres_server.h"

namespace lens::controller::controller_testing {

using std::chrono::milliseconds;
using test::KubeApiServer;
using test::KubeRequest;
using test::PostgresServer;

inline const std::string kFixtures = std::string(LENS_FIXTURES_DIR) + "/kube/";
constexpr char kPyTorchJobUid[] = "c9452740-8789-4bfa-9c31-65306786085f";
constexpr char kDeploymentUid[] = "6a231963-ac61-44f5-a2a5-f3060a0ed491";
constexpr char kTrainJobUid[] = "7b3f46b7-1048-4bd7-a990-338bc5d3fc1d";
constexpr char kRayJobUid[] = "dac5491a-7844-4a32-9f13-3f0230ea2ebf";
constexpr char kMpiJobUid[] = "63a71e29-2d3c-4b68-8e33-f7aa5e4cd8c9";
constexpr char kCronJobUid[] = "14ca179c-bf41-40b3-946e-6db3269f00cb";

// The objects of a fixture file (a JSON array), each as JSON text.
inline std::vector<std::string> Objects(const std::string& file) {
  std::ifstream in(kFixtures + file);
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str());
  std::vector<std::string> out;
  if (!doc.IsArray()) {
    ADD_FAILURE() << file << " is not a JSON array";
    return out;
  }
  for (const auto& o : doc.GetArray()) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    o.Accept(w);
    out.emplace_back(buffer.GetString(), buffer.GetSize());
  }
  return out;
}

inline void CreateAll(KubeApiServer& server, const std::string& file) {
  for (const std::string& o : Objects(file)) {
    ASSERT_NE(server.Create(o), "") << file << ": " << o.substr(0, 200);
  }
}

inline void UpdateAll(KubeApiServer& server, const std::string& file) {
  for (const std::string& o : Objects(file)) {
    ASSERT_NE(server.Update(o), "") << file << ": " << o.substr(0, 200);
  }
}

inline bool WaitUntil(const std::function<bool()>& done,
                      milliseconds timeout = milliseconds(15000)) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

inline Timestamp At(const std::string& rfc3339) {
  std::tm tm{};
  ::strptime(rfc3339.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return Timestamp(std::chrono::seconds(timegm(&tm)));
}

inline ControllerOptions Fast() {
  ControllerOptions o;
  o.flush_interval = milliseconds(50);
  o.owner_refresh = std::chrono::seconds(0);
  o.initial_backoff = milliseconds(50);
  o.max_backoff = milliseconds(300);
  return o;
}

// A controller on its own thread.
class Running {
 public:
  Running(KubeClient* client, Store* store, ControllerOptions options,
          std::function<bool()> is_leader = {})
      : controller_(client, store, std::move(options), std::move(is_leader)),
        thread_([this] { status_ = controller_.Run(); }) {}
  ~Running() { Stop(); }
  void Stop() {
    controller_.Stop();
    if (thread_.joinable()) thread_.join();
  }
  Controller* operator->() { return &controller_; }
  const Status& status() const { return status_; }

 private:
  Controller controller_;
  Status status_;
  std::thread thread_;
};

class ControllerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok()) << server_.error();
    auto client = KubeClient::Create(
        KubeConnection{.server = server_.url(), .origin = "test"});
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);
    OpenStore();
  }

  void OpenStore() {
    std::string url;
    if (GetParam() == "sqlite") {
      if (db_path_.empty()) {
        std::string name =
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::replace(name.begin(), name.end(), '/', '_');
        db_path_ = ::testing::TempDir() + "controller-" +
                   std::to_string(::getpid()) + "-" + name + ".db";
        std::filesystem::remove(db_path_);
      }
      url = "sqlite://" + db_path_;
    } else {
      if (pg_url_.empty()) {
        auto made = PostgresServer::Shared().CreateDatabase("controller_test");
        ASSERT_TRUE(made.ok()) << made.status();
        pg_url_ = *made;
      }
      url = pg_url_;
    }
    store_.reset();
    auto store = Store::Open(url);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  void TearDown() override {
    store_.reset();
    if (!db_path_.empty()) std::filesystem::remove(db_path_);
  }

  StatusOr<PodRecord> Pod(const std::string& ns, const std::string& name) {
    PodQuery q;
    q.namespace_name = ns;
    auto page = store_->pods().ListPods(q);
    if (!page.ok()) return page.status();
    for (PodRecord& p : page->items) {
      if (p.name == name) return p;
    }
    return NotFoundError(ns + "/" + name);
  }
  std::vector<std::string> EventTypes(const std::string& uid) {
    std::vector<std::string> out;
    auto events = store_->pods().ListPodEvents(uid);
    if (events.ok()) {
      for (const auto& e : *events) out.push_back(e.event_type);
    }
    return out;
  }
  size_t EventCount(const std::string& uid) { return EventTypes(uid).size(); }
  // The workload's row and its `pods` links are written (links come first,
  // in the same batch).
  bool Stored(const std::string& workload_uid, size_t pods) {
    auto links = store_->pods().ListWorkloadPods(workload_uid);
    return links.ok() && links->size() == pods &&
           store_->pods().GetWorkload(workload_uid).ok();
  }
  bool PodHas(const std::string& ns, const std::string& name,
              const std::function<bool(const PodRecord&)>& check) {
    auto p = Pod(ns, name);
    return p.ok() && check(*p);
  }

  KubeApiServer server_{{.bookmark_interval_ms = 200}};
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<Store> store_;
  std::string db_path_;
  std::string pg_url_;
};

}  // namespace lens::controller::controller_testing

#endif  // LENS_TEST_CLUSTER_CONTROLLER_TESTING_H_
