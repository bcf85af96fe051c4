// KubeInformer against the in-process API server: a paginated first list,
// then a watch that resumes from the last version when the server ends it,
// relists on 410 Gone and reports what vanished meanwhile as deleted,
// survives an API server restart, backs off on 429, and keeps whole JSON
// only for the objects it is told to.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "kube_api_server.h"
#include "kube_testing.h"
#include "lens/kube.h"

namespace lens {
namespace {

using kubetest::ConnectionTo;
using kubetest::PodJson;
using kubetest::RecordingHandler;
using test::KubeApiServer;
using test::KubeApiServerOptions;
using test::KubeRequest;

const KubeResource kPods{"", "v1", "pods", "Pod", true};

// An informer on its own thread, stopped and joined on destruction.
class Running {
 public:
  Running(KubeClient* client, KubeInformerOptions options,
          KubeEventHandler* handler)
      : informer_(client, std::move(options), handler),
        thread_([this] { status_ = informer_.Run(); }) {}
  ~Running() { Stop(); }
  void Stop() {
    informer_.Stop();
    if (thread_.joinable()) thread_.join();
  }
  KubeInformer& operator*() { return informer_; }
  KubeInformer* operator->() { return &informer_; }
  const Status& status() const { return status_; }

 private:
  KubeInformer informer_;
  Status status_;
  std::thread thread_;
};

KubeInformerOptions PodOptions() {
  KubeInformerOptions o;
  o.resource = kPods;
  o.initial_backoff = std::chrono::milliseconds(50);
  o.max_backoff = std::chrono::milliseconds(400);
  return o;
}

std::vector<KubeRequest> Verb(const std::vector<KubeRequest>& all,
                              const std::string& verb) {
  std::vector<KubeRequest> out;
  for (const KubeRequest& r : all) {
    if (r.verb == verb) out.push_back(r);
  }
  return out;
}

size_t Count(const std::vector<std::string>& lines, const std::string& line) {
  return std::count(lines.begin(), lines.end(), line);
}

bool WaitUntil(const std::function<bool()>& done,
               std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

class KubeInformerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok()) << server_.error();
    auto client = KubeClient::Create(ConnectionTo(server_));
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);
  }

  KubeApiServer server_{{.bookmark_interval_ms = 200}};
  std::unique_ptr<KubeClient> client_;
  RecordingHandler handler_;
};

TEST_F(KubeInformerTest, ListsInPagesThenWatchesFromTheListsVersion) {
  for (int i = 0; i < 25; ++i) {
    ASSERT_NE(server_.Create(PodJson("ml", "p" + std::to_string(i))), "");
  }
  KubeInformerOptions o = PodOptions();
  o.page_size = 10;
  Running informer(client_.get(), o, &handler_);
  ASSERT_TRUE(handler_.WaitForLine("synced"));
  const auto lines = handler_.lines();
  ASSERT_EQ(lines.size(), 26u);
  EXPECT_EQ(lines.back(), "synced");
  for (int i = 0; i < 25; ++i) {
    EXPECT_EQ(Count(lines, "add ml/p" + std::to_string(i)), 1u) << i;
  }
  EXPECT_EQ(informer->List().size(), 25u);
  auto p7 = informer->Get("ml", "p7");
  ASSERT_TRUE(p7.ok());
  EXPECT_EQ(informer->GetByUid(p7->uid)->name, "p7");
  EXPECT_EQ(informer->Get("ml", "p99").status().code(), StatusCode::kNotFound);

  const auto lists = Verb(server_.Requests(), "list");
  ASSERT_EQ(lists.size(), 3u);
  for (const KubeRequest& r : lists) {
    EXPECT_NE(r.query.find("limit=10"), std::string::npos) << r.query;
  }
  EXPECT_NE(lists[1].query.find("continue="), std::string::npos);

  // Changes after the list arrive through the watch, in order.
  const std::string rv = std::to_string(server_.resource_version());
  ASSERT_TRUE(WaitUntil([&] { return server_.open_watches() == 1; }));
  const auto watches = Verb(server_.Requests(), "watch");
  ASSERT_EQ(watches.size(), 1u);
  EXPECT_NE(watches[0].query.find("resourceVersion=" + rv), std::string::npos)
      << watches[0].query;
  EXPECT_NE(watches[0].query.find("allowWatchBookmarks=true"),
            std::string::npos);
  ASSERT_NE(server_.Create(PodJson("ml", "new")), "");
  ASSERT_NE(server_.Update(PodJson("ml", "p3", 0, "node-1", "Running")), "");
  ASSERT_TRUE(server_.Delete("v1", "Pod", "ml", "p4"));
  ASSERT_TRUE(handler_.WaitForLine("delete ml/p4"));
  const auto after = handler_.lines();
  const std::vector<std::string> tail(after.end() - 3, after.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"add ml/new", "update ml/p3",
                                            "delete ml/p4"}));
  // The update carries the old state (from the cache) and the new one.
  const auto olds = handler_.old_objects();
  const auto news = handler_.objects();
  EXPECT_NE(olds[olds.size() - 2].json.find("Pending"), std::string::npos);
  EXPECT_NE(news[news.size() - 2].json.find("node-1"), std::string::npos);
  EXPECT_EQ(informer->List().size(), 25u);
  informer.Stop();
  EXPECT_TRUE(informer.status().ok()) << informer.status().message();
}

TEST_F(KubeInformerTest,
       ResumesAClosedWatchFromTheLastVersionWithoutRelisting) {
  ASSERT_NE(server_.Create(PodJson("ml", "a")), "");
  Running informer(client_.get(), PodOptions(), &handler_);
  ASSERT_TRUE(handler_.WaitForLine("synced"));
  ASSERT_TRUE(WaitUntil([&] { return server_.open_watches() == 1; }));
  ASSERT_NE(server_.Create(PodJson("ml", "b")), "");
  ASSERT_TRUE(handler_.WaitForLine("add ml/b"));
  const std::string seen = std::to_string(server_.resource_version());
  server_.CloseWatches();  // as at timeoutSeconds
  ASSERT_TRUE(
      WaitUntil([&] { return Verb(server_.Requests(), "watch").size() == 2; }));
  ASSERT_NE(server_.Create(PodJson("ml", "c")), "");
  ASSERT_TRUE(handler_.WaitForLine("add ml/c"));
  const auto watches = Verb(server_.Requests(), "watch");
  EXPECT_NE(watches[1].query.find("resourceVersion=" + seen), std::string::npos)
      << watches[0].query << " then " << watches[1].query << " "
      << watches[1].status;
  EXPECT_EQ(Verb(server_.Requests(), "list").size(), 1u);
  const auto lines = handler_.lines();
  EXPECT_EQ(Count(lines, "add ml/a"), 1u);
  EXPECT_EQ(Count(lines, "add ml/b"), 1u);
  EXPECT_EQ(Count(lines, "synced"), 1u);
  const KubeInformerStats stats = informer->Stats();
  EXPECT_GE(stats.watch_restarts, 1u);
  EXPECT_EQ(stats.relists, 0u);
  EXPECT_EQ(stats.lists, 1u);
}

TEST_F(KubeInformerTest, BookmarksAdvanceTheVersionWithoutEvents) {
  Running informer(client_.get(), PodOptions(), &handler_);
  ASSERT_TRUE(handler_.WaitForLine("synced"));
  // Changes to another resource move the server's version; the pod watch
  // learns it from bookmarks alone.
  ASSERT_NE(
      server_.Create(
          R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}})"),
      "");
  const std::string rv = std::to_string(server_.resource_version());
  ASSERT_TRUE(WaitUntil([&] {
    return informer->Stats().resource_version == rv;
  })) << informer->Stats().resource_version
      << " vs " << rv;
  EXPECT_GE(informer->Stats().bookmarks, 1u);
  EXPECT_EQ(informer->Stats().events, 0u);
  EXPECT_EQ(handler_.lines(), std::vector<std::string>{"synced"});
}

// etcd compacted while the informer was away: the watch from its old version
// gets 410, the informer relists and reports what it missed, the deletions
// as seen gone (their time unknown).
TEST_F(KubeInformerTest, RelistsAfter410AndReportsVanishedObjectsAsGone) {
  for (const char* name : {"keep", "change", "vanish"}) {
    ASSERT_NE(server_.Create(PodJson("ml", name)), "");
  }
  Running informer(client_.get(), PodOptions(), &handler_);
  ASSERT_TRUE(handler_.WaitForLine("synced"));
  ASSERT_TRUE(WaitUntil([&] { return server_.open_watches() == 1; }));
  server_.Stop();
  ASSERT_TRUE(server_.Delete("v1", "Pod", "ml", "vanish"));
  ASSERT_NE(server_.Update(PodJson("ml", "change", 0, "node-2", "Running")),
            "");
  ASSERT_NE(server_.Create(PodJson("ml", "born")), "");
  server_.Compact();
  ASSERT_TRUE(server_.Start());
  ASSERT_TRUE(handler_.WaitForLine("synced", 2, std::chrono::seconds(15)));
  const auto lines = handler_.lines();
  const std::vector<std::string> relist(lines.begin() + 4, lines.end());
  ASSERT_EQ(relist.size(), 4u) << ::testing::PrintToString(lines);
  // Changes as the pages arrive, then what the list lacked, then synced.
  EXPECT_EQ(relist[2], "delete ml/vanish gone");
  EXPECT_EQ(relist.back(), "synced");
  EXPECT_EQ(Count(relist, "update ml/change"), 1u);
  EXPECT_EQ(Count(relist, "add ml/born"), 1u);
  EXPECT_EQ(Count(lines, "add ml/keep"), 1u);  // unchanged: not re-added
  // The gone object is reported as last known, whole.
  EXPECT_NE(handler_.objects()[6].json.find("\"vanish\""), std::string::npos);
  const KubeInformerStats stats = informer->Stats();
  EXPECT_EQ(stats.relists, 1u);
  EXPECT_EQ(stats.lists, 2u);
  EXPECT_GE(stats.errors, 1u);  // the watch while the server was down
  EXPECT_EQ(stats.objects, 3u);
}

TEST_F(KubeInformerTest, SurvivesAnApiServerRestartWithoutLosingOrDoubling) {
  ASSERT_NE(server_.Create(PodJson("ml", "a")), "");
  Running informer(client_.get(), PodOptions(), &handler_);
  ASSERT_TRUE(handler_.WaitForLine("synced"));
  ASSERT_TRUE(WaitUntil([&] { return server_.open_watches() == 1; }));
  ASSERT_TRUE(server_.Restart());
  ASSERT_NE(server_.Create(PodJson("ml", "b")), "");
  ASSERT_TRUE(handler_.WaitForLine("add ml/b"));
  ASSERT_NE(server_.Create(PodJson("ml", "c")), "");
  ASSERT_TRUE(handler_.WaitForLine("add ml/c"));
  EXPECT_EQ(
      handler_.lines(),
      (std::vector<std::string>{"add ml/a", "synced", "add ml/b", "add ml/c"}));
  EXPECT_EQ(informer->Stats().relists, 0u);
}

TEST_F(KubeInformerTest, BacksOffOn429HonouringRetryAfter) {
  server_.FailNext("/pods", 429, 2);
  const auto start = std::chrono::steady_clock::now();
  Running informer(client_.get(), PodOptions(), &handler_);
  ASSERT_TRUE(handler_.WaitForLine("synced"));
  const auto took = std::chrono::steady_clock::now() - start;
  // Two refusals, each with Retry-After: 1.
  EXPECT_GE(took, std::chrono::milliseconds(1900));
  const KubeInformerStats stats = informer->Stats();
  EXPECT_EQ(stats.errors, 2u);
  EXPECT_NE(stats.last_error.find("429"), std::string::npos)
      << stats.last_error;
  const auto lists = Verb(server_.Requests(), "list");
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_EQ(lists[0].status, 429);
  EXPECT_EQ(lists[2].status, 200);
}

TEST_F(KubeInformerTest, MetadataOnlyAsksForPartialObjectMetadata) {
  ASSERT_NE(server_.Create(PodJson("ml", "a", 8)), "");
  KubeInformerOptions o = PodOptions();
  o.metadata_only = true;
  Running informer(client_.get(), o, &handler_);
  ASSERT_TRUE(handler_.WaitForLine("synced"));
  ASSERT_NE(server_.Create(PodJson("ml", "b", 8)), "");
  ASSERT_TRUE(handler_.WaitForLine("add ml/b"));
  for (const KubeObject& o : handler_.objects()) {
    if (o.name.empty()) continue;
    EXPECT_NE(o.json.find("PartialObjectMetadata"), std::string::npos)
        << o.json;
    EXPECT_EQ(o.json.find("amd.com/gpu"), std::string::npos) << o.json;
    EXPECT_FALSE(o.uid.empty());
  }
}

TEST_F(KubeInformerTest, KeepsWholeJsonOnlyForTheObjectsItIsToldTo) {
  ASSERT_NE(server_.Create(PodJson("ml", "gpu", 8)), "");
  ASSERT_NE(server_.Create(PodJson("ml", "cpu")), "");
  KubeInformerOptions o = PodOptions();
  o.keep_json = [](std::string_view json) {
    return json.find("amd.com/gpu") != std::string_view::npos;
  };
  Running informer(client_.get(), o, &handler_);
  ASSERT_TRUE(handler_.WaitForLine("synced"));
  EXPECT_FALSE(informer->Get("ml", "gpu")->json.empty());
  auto cpu = informer->Get("ml", "cpu");
  ASSERT_TRUE(cpu.ok());
  EXPECT_TRUE(cpu->json.empty());
  EXPECT_FALSE(cpu->resource_version.empty());
  // The handler still gets every new state whole.
  ASSERT_NE(server_.Update(PodJson("ml", "cpu", 0, "node-1", "Running")), "");
  ASSERT_TRUE(handler_.WaitForLine("update ml/cpu"));
  EXPECT_NE(handler_.objects().back().json.find("node-1"), std::string::npos);
}

TEST_F(KubeInformerTest, SelectorsAndNamespaceGoToTheServer) {
  ASSERT_NE(server_.Create(PodJson("ml", "on-node", 0, "node-1")), "");
  ASSERT_NE(server_.Create(PodJson("ml", "elsewhere", 0, "node-2")), "");
  ASSERT_NE(server_.Create(PodJson("other", "on-node", 0, "node-1")), "");
  KubeInformerOptions o = PodOptions();
  o.namespace_name = "ml";
  o.field_selector = "spec.nodeName=node-1";
  Running informer(client_.get(), o, &handler_);
  ASSERT_TRUE(handler_.WaitForLine("synced"));
  EXPECT_EQ(handler_.lines(),
            (std::vector<std::string>{"add ml/on-node", "synced"}));
  const auto lists = Verb(server_.Requests(), "list");
  ASSERT_EQ(lists.size(), 1u);
  EXPECT_EQ(lists[0].namespace_name, "ml");
  EXPECT_NE(lists[0].query.find("fieldSelector=spec.nodeName%3Dnode-1"),
            std::string::npos)
      << lists[0].query;
}

TEST_F(KubeInformerTest, RefusesAZeroPageSize) {
  KubeInformerOptions o = PodOptions();
  o.page_size = 0;
  KubeInformer informer(client_.get(), o, &handler_);
  EXPECT_EQ(informer.Run().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lens
