// The in-process Kubernetes API server (test/support/kube_api_server.h)
// spoken to with cpp-httplib's client, as any HTTP client sees it: discovery
// documents, lists and pages, selectors, metadata-only answers, watch
// streams, errors as Status objects, bearer token, TLS and fault injection.
#include "kube_api_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace lens::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr char kPods[] = "/api/v1/namespaces/default/pods";
constexpr char kMetadataList[] =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
constexpr char kMetadataObject[] =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

rapidjson::Document Json(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  EXPECT_FALSE(doc.HasParseError()) << text;
  if (doc.HasParseError()) doc.SetObject();
  return doc;
}

// The string at a dotted path of `doc`, "" when absent.
std::string At(const rapidjson::Value& doc, const std::string& path) {
  const rapidjson::Value* v = &doc;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = std::min(path.find('.', start), path.size());
    const std::string part = path.substr(start, dot - start);
    if (!v->IsObject() || !v->HasMember(part.c_str())) return "";
    v = &(*v)[part.c_str()];
    start = dot + 1;
  }
  if (v->IsString()) return v->GetString();
  if (v->IsInt64()) return std::to_string(v->GetInt64());
  if (v->IsBool()) return v->GetBool() ? "true" : "false";
  return "";
}

std::string Enc(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

std::string Pod(const std::string& name, const std::string& node = "n1",
                const std::string& phase = "Running",
                const std::string& labels = R"({"app":"a"})") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"default","labels":)" + labels +
         R"(},"spec":{"nodeName":")" + node + R"("},"status":{"phase":")" +
         phase + R"("}})";
}

std::vector<std::string> ItemNames(const rapidjson::Document& list) {
  std::vector<std::string> names;
  for (const auto& item : list["items"].GetArray()) {
    names.push_back(At(item, "metadata.name"));
  }
  return names;
}

bool WaitFor(const std::function<bool()>& done) {
  const auto until = Clock::now() + 3s;
  while (!done()) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// What a watch received.
struct WatchResult {
  int status = 0;
  std::string transfer_encoding;
  httplib::Error error = httplib::Error::Success;
  std::vector<std::string> lines;
  Clock::duration elapsed{};
  std::string Type(size_t i) const { return At(Json(lines.at(i)), "type"); }
  std::string Field(size_t i, const std::string& path) const {
    return At(Json(lines.at(i)), "object." + path);
  }
};

// Reads the watch at `path` until the server ends it, or until `enough`
// lines arrived (then the client hangs up).
WatchResult RunWatch(const std::string& url, const std::string& path,
                     size_t enough = SIZE_MAX, httplib::Headers headers = {}) {
  httplib::Client client(url);
  client.set_read_timeout(10, 0);
  if (url.rfind("https://", 0) == 0) {
    client.set_ca_cert_path(KubeApiServer::CaFile());
    client.enable_server_certificate_verification(true);
  }
  WatchResult out;
  std::string buffer;
  const auto start = Clock::now();
  auto result = client.Get(
      path, headers,
      [&](const httplib::Response& r) {
        out.status = r.status;
        out.transfer_encoding = r.get_header_value("Transfer-Encoding");
        return true;
      },
      [&](const char* data, size_t size) {
        buffer.append(data, size);
        for (size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
          out.lines.push_back(buffer.substr(0, nl));
          buffer.erase(0, nl + 1);
        }
        return out.lines.size() < enough;
      });
  out.error = result.error();
  out.elapsed = Clock::now() - start;
  return out;
}

class KubeApiServerTest : public ::testing::Test {
 protected:
  void Start(KubeApiServerOptions options = {}) {
    server_ = std::make_unique<KubeApiServer>(options);
    ASSERT_TRUE(server_->ok()) << server_->error();
    client_ = std::make_unique<httplib::Client>(server_->url());
    client_->set_read_timeout(5, 0);
    if (!options.token.empty()) client_->set_bearer_token_auth(options.token);
  }
  void SetUp() override { Start(); }

  // GET `path`: the status, and the body as JSON.
  std::pair<int, rapidjson::Document> GetJson(const std::string& path,
                                              const std::string& accept = "") {
    httplib::Headers headers;
    if (!accept.empty()) headers.emplace("Accept", accept);
    auto r = client_->Get(path, headers);
    if (!r) {
      ADD_FAILURE() << "GET " << path << ": " << httplib::to_string(r.error());
      return {0, Json("{}")};
    }
    return {r->status, Json(r->body)};
  }

  int Post(const std::string& path, const std::string& body) {
    auto r = client_->Post(path, body, "application/json");
    return r ? r->status : 0;
  }

  std::future<WatchResult> WatchAsync(const std::string& path,
                                      size_t enough = SIZE_MAX,
                                      httplib::Headers headers = {}) {
    const int before = server_->open_watches();
    auto future = std::async(std::launch::async, RunWatch, server_->url(), path,
                             enough, headers);
    EXPECT_TRUE(WaitFor([&] { return server_->open_watches() > before; }));
    return future;
  }

  std::string Rv() const { return std::to_string(server_->resource_version()); }

  std::unique_ptr<KubeApiServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(KubeApiServerTest, ServesDiscoveryDocuments) {
  auto [status, versions] = GetJson("/api");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(At(versions, "kind"), "APIVersions");
  EXPECT_EQ(std::string(versions["versions"][0].GetString()), "v1");

  auto [s2, groups] = GetJson("/apis");
  EXPECT_EQ(At(groups, "kind"), "APIGroupList");
  bool apps = false;
  for (const auto& g : groups["groups"].GetArray()) {
    if (At(g, "name") != "apps") continue;
    apps = true;
    EXPECT_EQ(At(g, "preferredVersion.groupVersion"), "apps/v1");
    EXPECT_EQ(At(g["versions"][0], "version"), "v1");
  }
  EXPECT_TRUE(apps);

  auto [s3, group] = GetJson("/apis/jobset.x-k8s.io");
  EXPECT_EQ(At(group, "kind"), "APIGroup");
  EXPECT_EQ(At(group, "preferredVersion.version"), "v1alpha2");

  auto [s4, core] = GetJson("/api/v1");
  EXPECT_EQ(At(core, "kind"), "APIResourceList");
  EXPECT_EQ(At(core, "groupVersion"), "v1");
  bool pods = false;
  for (const auto& r : core["resources"].GetArray()) {
    if (At(r, "name") == "nodes") {
      EXPECT_EQ(At(r, "namespaced"), "false");
    }
    if (At(r, "name") != "pods") continue;
    pods = true;
    EXPECT_EQ(At(r, "singularName"), "pod");
    EXPECT_EQ(At(r, "kind"), "Pod");
    EXPECT_EQ(At(r, "namespaced"), "true");
    bool watch = false;
    for (const auto& v : r["verbs"].GetArray()) {
      watch = watch || std::string(v.GetString()) == "watch";
    }
    EXPECT_TRUE(watch);
  }
  EXPECT_TRUE(pods);

  server_->AddResource({"example.com", "v1", "widgets", "Widget", false});
  auto [s5, widgets] = GetJson("/apis/example.com/v1");
  EXPECT_EQ(s5, 200);
  EXPECT_EQ(At(widgets["resources"][0], "kind"), "Widget");

  auto [s6, missing] = GetJson("/apis/nope.example.com/v1");
  EXPECT_EQ(s6, 404);
  EXPECT_EQ(At(missing, "kind"), "Status");
  EXPECT_EQ(At(missing, "reason"), "NotFound");
}

TEST_F(KubeApiServerTest, CreatesGetsAndPagesThroughASnapshot) {
  for (int i = 1; i <= 5; ++i) {
    EXPECT_EQ(Post(kPods, Pod("p" + std::to_string(i))), 201);
  }
  auto dup = client_->Post(kPods, Pod("p1"), "application/json");
  ASSERT_TRUE(dup);
  EXPECT_EQ(dup->status, 409);
  EXPECT_EQ(At(Json(dup->body), "reason"), "AlreadyExists");

  auto [status, pod] = GetJson(std::string(kPods) + "/p3");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(At(pod, "metadata.name"), "p3");
  EXPECT_FALSE(At(pod, "metadata.uid").empty());
  EXPECT_FALSE(At(pod, "metadata.creationTimestamp").empty());

  const std::string rv = Rv();
  auto [s1, page1] = GetJson(std::string(kPods) + "?limit=2");
  EXPECT_EQ(At(page1, "kind"), "PodList");
  EXPECT_EQ(At(page1, "apiVersion"), "v1");
  EXPECT_EQ(At(page1, "metadata.resourceVersion"), rv);
  EXPECT_EQ(At(page1, "metadata.remainingItemCount"), "3");
  EXPECT_EQ(ItemNames(page1), (std::vector<std::string>{"p1", "p2"}));
  const std::string token = At(page1, "metadata.continue");
  ASSERT_FALSE(token.empty());

  // Later pages come from the first page's snapshot.
  server_->Create(Pod("p0"));
  server_->Delete("v1", "Pod", "default", "p4");
  auto [s2, page2] =
      GetJson(std::string(kPods) + "?limit=2&continue=" + Enc(token));
  EXPECT_EQ(s2, 200);
  EXPECT_EQ(At(page2, "metadata.resourceVersion"), rv);
  EXPECT_EQ(At(page2, "metadata.remainingItemCount"), "1");
  EXPECT_EQ(ItemNames(page2), (std::vector<std::string>{"p3", "p4"}));
  auto [s3, page3] = GetJson(std::string(kPods) + "?limit=2&continue=" +
                             Enc(At(page2, "metadata.continue")));
  EXPECT_EQ(ItemNames(page3), (std::vector<std::string>{"p5"}));
  EXPECT_FALSE(page3["metadata"].HasMember("continue"));
  EXPECT_FALSE(page3["metadata"].HasMember("remainingItemCount"));

  auto [s4, all] = GetJson("/api/v1/pods");
  EXPECT_EQ(ItemNames(all),
            (std::vector<std::string>{"p0", "p1", "p2", "p3", "p5"}));
  auto [s5, bad] = GetJson(std::string(kPods) + "?continue=%21%21");
  EXPECT_EQ(s5, 400);
}

TEST_F(KubeApiServerTest, FiltersListsByLabelAndFieldSelectors) {
  server_->Create(Pod("a1", "n1", "Running", R"({"app":"a"})"));
  server_->Create(Pod("b1", "n2", "Succeeded", R"({"app":"b"})"));
  server_->Create(Pod("c1", "n1", "Pending", R"({"tier":"x"})"));
  auto names = [&](const std::string& query) {
    auto [status, list] = GetJson(std::string(kPods) + "?" + query);
    EXPECT_EQ(status, 200) << query;
    return ItemNames(list);
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names("labelSelector=" + Enc("app=a")), V{"a1"});
  EXPECT_EQ(names("labelSelector=" + Enc("app in (a,b)")), (V{"a1", "b1"}));
  EXPECT_EQ(names("labelSelector=" + Enc("app notin (a)")), (V{"b1", "c1"}));
  EXPECT_EQ(names("labelSelector=" + Enc("!app")), V{"c1"});
  EXPECT_EQ(names("labelSelector=" + Enc("app,app!=b")), V{"a1"});
  EXPECT_EQ(names("fieldSelector=" + Enc("spec.nodeName=n1")), (V{"a1", "c1"}));
  EXPECT_EQ(names("fieldSelector=" + Enc("status.phase!=Succeeded")),
            (V{"a1", "c1"}));
  EXPECT_EQ(names("fieldSelector=" + Enc("spec.nodeName=n1,metadata.name=c1") +
                  "&labelSelector=" + Enc("tier")),
            V{"c1"});
  // With a selector a page has no remainingItemCount.
  auto [status, page] = GetJson(
      std::string(kPods) + "?limit=1&fieldSelector=" + Enc("spec.nodeName=n1"));
  EXPECT_EQ(ItemNames(page), V{"a1"});
  EXPECT_FALSE(At(page, "metadata.continue").empty());
  EXPECT_FALSE(page["metadata"].HasMember("remainingItemCount"));

  auto [bad, error] =
      GetJson(std::string(kPods) + "?labelSelector=" + Enc("app in (a"));
  EXPECT_EQ(bad, 400);
  EXPECT_EQ(At(error, "reason"), "BadRequest");
}

TEST_F(KubeApiServerTest, AnswersMetadataOnlyListsAndObjects) {
  server_->Create(Pod("p1"));
  auto [status, list] = GetJson(kPods, kMetadataList);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(At(list, "kind"), "PartialObjectMetadataList");
  EXPECT_EQ(At(list, "apiVersion"), "meta.k8s.io/v1");
  ASSERT_EQ(list["items"].Size(), 1u);
  const auto& item = list["items"][0];
  EXPECT_EQ(At(item, "kind"), "PartialObjectMetadata");
  EXPECT_EQ(At(item, "metadata.name"), "p1");
  EXPECT_EQ(At(item, "metadata.labels.app"), "a");
  EXPECT_FALSE(item.HasMember("spec"));

  auto [s2, pod] = GetJson(std::string(kPods) + "/p1",
                           std::string(kMetadataObject) + ",application/json");
  EXPECT_EQ(At(pod, "kind"), "PartialObjectMetadata");
  EXPECT_FALSE(pod.HasMember("status"));
}

TEST_F(KubeApiServerTest, WatchReplaysChangesAfterResourceVersion) {
  const std::string from = Rv();
  ASSERT_EQ(Post(kPods, Pod("p1")), 201);
  std::string updated = server_->Get("v1", "Pod", "default", "p1");
  updated.replace(updated.find("Running"), 7, "Failed");
  auto put =
      client_->Put(std::string(kPods) + "/p1", updated, "application/json");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 200);
  auto del = client_->Delete(std::string(kPods) + "/p1");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200);

  const WatchResult w = RunWatch(
      server_->url(), std::string(kPods) + "?watch=1&resourceVersion=" + from +
                          "&timeoutSeconds=1");
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(w.transfer_encoding, "chunked");
  EXPECT_EQ(w.error, httplib::Error::Success);  // ended cleanly
  ASSERT_EQ(w.lines.size(), 3u);
  EXPECT_EQ(w.Type(0), "ADDED");
  EXPECT_EQ(w.Type(1), "MODIFIED");
  EXPECT_EQ(w.Field(1, "status.phase"), "Failed");
  EXPECT_EQ(w.Type(2), "DELETED");
  EXPECT_EQ(w.Field(2, "metadata.name"), "p1");
  EXPECT_EQ(w.Field(2, "kind"), "Pod");
  EXPECT_LT(std::stoull(w.Field(1, "metadata.resourceVersion")),
            std::stoull(w.Field(2, "metadata.resourceVersion")));
  EXPECT_EQ(w.Field(2, "metadata.resourceVersion"), Rv());
}

TEST_F(KubeApiServerTest, WatchStreamsLiveChanges) {
  auto watch =
      WatchAsync(std::string(kPods) + "?watch=true&resourceVersion=" + Rv(), 3);
  server_->Create(Pod("p1"));
  server_->Create(
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}})");
  server_->Update(Pod("p1", "n2"));
  server_->Delete("v1", "Pod", "default", "p1");
  ASSERT_EQ(watch.wait_for(3s), std::future_status::ready);
  const WatchResult w = watch.get();
  ASSERT_EQ(w.lines.size(), 3u);
  EXPECT_EQ(w.Type(0), "ADDED");
  EXPECT_EQ(w.Type(1), "MODIFIED");
  EXPECT_EQ(w.Field(1, "spec.nodeName"), "n2");
  EXPECT_EQ(w.Type(2), "DELETED");
}

TEST_F(KubeApiServerTest, WatchWithoutResourceVersionStartsWithCurrentState) {
  server_->Create(Pod("p1"));
  server_->Create(Pod("p2"));
  auto watch = WatchAsync(std::string(kPods) + "?watch=1&resourceVersion=0", 3);
  server_->Create(Pod("p3"));
  ASSERT_EQ(watch.wait_for(3s), std::future_status::ready);
  const WatchResult w = watch.get();
  ASSERT_EQ(w.lines.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(w.Type(i), "ADDED");
    EXPECT_EQ(w.Field(i, "metadata.name"), "p" + std::to_string(i + 1));
  }
}

TEST_F(KubeApiServerTest, WatchSendsBookmarksWhenQuiet) {
  KubeApiServerOptions options;
  options.bookmark_interval_ms = 100;
  Start(options);
  server_->Create(Pod("p1"));
  const auto start = Clock::now();
  const WatchResult w =
      RunWatch(server_->url(),
               std::string(kPods) +
                   "?watch=1&allowWatchBookmarks=true&resourceVersion=" + Rv() +
                   "&timeoutSeconds=5",
               1);
  EXPECT_LT(Clock::now() - start, 2s);
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_EQ(w.Type(0), "BOOKMARK");
  EXPECT_EQ(w.Field(0, "kind"), "Pod");
  EXPECT_EQ(w.Field(0, "apiVersion"), "v1");
  EXPECT_EQ(w.Field(0, "metadata.resourceVersion"), Rv());
}

TEST_F(KubeApiServerTest, InitialEventsEndWithAnnotatedBookmark) {
  server_->Create(Pod("p1"));
  const WatchResult w =
      RunWatch(server_->url(),
               std::string(kPods) +
                   "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&"
                   "resourceVersionMatch=NotOlderThan&resourceVersion=" +
                   Rv(),
               2);
  ASSERT_EQ(w.lines.size(), 2u);
  EXPECT_EQ(w.Type(0), "ADDED");
  EXPECT_EQ(w.Type(1), "BOOKMARK");
  EXPECT_NE(
      w.lines[1].find(R"("annotations":{"k8s.io/initial-events-end":"true"})"),
      std::string::npos);
}

TEST_F(KubeApiServerTest, WatchFromCompactedVersionGetsExpiredError) {
  server_->Create(Pod("p1"));
  const std::string old = Rv();
  server_->Update(Pod("p1", "n2"));
  server_->Compact();
  const WatchResult w = RunWatch(
      server_->url(), std::string(kPods) + "?watch=1&resourceVersion=" + old +
                          "&timeoutSeconds=30");
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(w.error, httplib::Error::Success);
  EXPECT_LT(w.elapsed, 2s);
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_EQ(w.Type(0), "ERROR");
  EXPECT_EQ(w.Field(0, "kind"), "Status");
  EXPECT_EQ(w.Field(0, "code"), "410");
  EXPECT_EQ(w.Field(0, "reason"), "Expired");
  EXPECT_EQ(server_->open_watches(), 0);
}

TEST_F(KubeApiServerTest, ContinueFromCompactedVersionIsGone) {
  for (int i = 1; i <= 5; ++i) server_->Create(Pod("p" + std::to_string(i)));
  auto [status, page1] = GetJson(std::string(kPods) + "?limit=2");
  const std::string token = At(page1, "metadata.continue");
  server_->Update(Pod("p5", "n2"));
  server_->Compact();
  auto [gone_status, gone] =
      GetJson(std::string(kPods) + "?limit=2&continue=" + Enc(token));
  EXPECT_EQ(gone_status, 410);
  EXPECT_EQ(At(gone, "kind"), "Status");
  EXPECT_EQ(At(gone, "reason"), "Expired");
  EXPECT_EQ(At(gone, "code"), "410");
  // The Status carries a token that continues from the current state.
  const std::string inconsistent = At(gone, "metadata.continue");
  ASSERT_FALSE(inconsistent.empty());
  auto [s2, rest] =
      GetJson(std::string(kPods) + "?continue=" + Enc(inconsistent));
  EXPECT_EQ(s2, 200);
  EXPECT_EQ(ItemNames(rest), (std::vector<std::string>{"p3", "p4", "p5"}));
}

TEST_F(KubeApiServerTest, TimeoutSecondsEndsWatch) {
  const WatchResult w = RunWatch(
      server_->url(), std::string(kPods) + "?watch=1&resourceVersion=" + Rv() +
                          "&timeoutSeconds=1");
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(w.error, httplib::Error::Success);
  EXPECT_TRUE(w.lines.empty());
  EXPECT_GE(w.elapsed, 900ms);
  EXPECT_LT(w.elapsed, 2500ms);
  EXPECT_EQ(server_->open_watches(), 0);
}

TEST_F(KubeApiServerTest, MaxWatchSecondsBoundsTimeoutSeconds) {
  KubeApiServerOptions options;
  options.max_watch_seconds = 1;
  Start(options);
  const WatchResult w = RunWatch(
      server_->url(), std::string(kPods) + "?watch=1&resourceVersion=" + Rv() +
                          "&timeoutSeconds=600");
  EXPECT_EQ(w.error, httplib::Error::Success);
  EXPECT_LT(w.elapsed, 2500ms);
}

TEST_F(KubeApiServerTest, CloseWatchesEndsStreamsCleanly) {
  auto watch =
      WatchAsync(std::string(kPods) + "?watch=1&resourceVersion=" + Rv() +
                 "&timeoutSeconds=30");
  server_->Create(Pod("p1"));
  server_->CloseWatches();
  ASSERT_EQ(watch.wait_for(3s), std::future_status::ready);
  const WatchResult w = watch.get();
  EXPECT_EQ(w.error, httplib::Error::Success);
  ASSERT_EQ(w.lines.size(), 1u);  // what was committed before still arrives
  EXPECT_EQ(w.Type(0), "ADDED");
  EXPECT_EQ(server_->open_watches(), 0);
}

TEST_F(KubeApiServerTest, RestartDropsWatchesAndKeepsObjects) {
  server_->Create(Pod("p1"));
  const uint64_t rv = server_->resource_version();
  const std::string url = server_->url();
  auto watch =
      WatchAsync(std::string(kPods) + "?watch=1&resourceVersion=" + Rv() +
                 "&timeoutSeconds=30");
  ASSERT_TRUE(server_->Restart()) << server_->error();
  ASSERT_EQ(watch.wait_for(3s), std::future_status::ready);
  EXPECT_NE(watch.get().error, httplib::Error::Success);  // dropped mid-stream
  EXPECT_EQ(server_->open_watches(), 0);
  EXPECT_EQ(server_->url(), url);
  EXPECT_EQ(server_->resource_version(), rv);
  auto [status, pod] = GetJson(std::string(kPods) + "/p1");
  EXPECT_EQ(status, 200);
  // The history survives too: a watch resumes where it left off.
  server_->Update(Pod("p1", "n2"));
  const WatchResult w = RunWatch(
      url,
      std::string(kPods) + "?watch=1&resourceVersion=" + std::to_string(rv), 1);
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_EQ(w.Type(0), "MODIFIED");

  server_->Stop();
  EXPECT_FALSE(server_->ok());
  EXPECT_FALSE(client_->Get("/api"));
  ASSERT_TRUE(server_->Start());
  EXPECT_EQ(GetJson("/api").first, 200);
}

TEST_F(KubeApiServerTest, NoticesWatchClientLeaving) {
  server_->Create(Pod("p1"));
  // The client hangs up after the first line; the watch would last 30 s.
  const WatchResult w = RunWatch(
      server_->url(), std::string(kPods) + "?watch=1&timeoutSeconds=30", 1);
  EXPECT_EQ(w.lines.size(), 1u);
  EXPECT_TRUE(WaitFor([&] { return server_->open_watches() == 0; }));
}

TEST_F(KubeApiServerTest, SelectorScopeChangesAreAddedAndDeleted) {
  const std::string from = Rv();
  server_->Create(Pod("p1", "n1", "Running", R"({"app":"b"})"));
  server_->Update(Pod("p1", "n1", "Running", R"({"app":"a"})"));
  server_->Update(Pod("p1", "n2", "Running", R"({"app":"a"})"));
  server_->Update(Pod("p1", "n2", "Running", R"({"app":"b"})"));
  const std::string left = Rv();
  server_->Delete("v1", "Pod", "default", "p1");
  const WatchResult w =
      RunWatch(server_->url(),
               std::string(kPods) + "?watch=1&labelSelector=" + Enc("app=a") +
                   "&resourceVersion=" + from + "&timeoutSeconds=1");
  ASSERT_EQ(w.lines.size(), 3u);
  EXPECT_EQ(w.Type(0), "ADDED");
  EXPECT_EQ(w.Type(1), "MODIFIED");
  EXPECT_EQ(w.Type(2), "DELETED");
  // The last state in scope, at the version that took it out.
  EXPECT_EQ(w.Field(2, "metadata.labels.app"), "a");
  EXPECT_EQ(w.Field(2, "metadata.resourceVersion"), left);
}

TEST_F(KubeApiServerTest, WatchesMetadataOnly) {
  const std::string from = Rv();
  server_->Create(Pod("p1"));
  const WatchResult w =
      RunWatch(server_->url(),
               std::string(kPods) +
                   "?watch=1&allowWatchBookmarks=true&resourceVersion=" + from,
               1, {{"Accept", kMetadataObject}});
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_EQ(w.Type(0), "ADDED");
  EXPECT_EQ(w.Field(0, "kind"), "PartialObjectMetadata");
  EXPECT_EQ(w.Field(0, "apiVersion"), "meta.k8s.io/v1");
  EXPECT_EQ(w.Field(0, "metadata.name"), "p1");
  EXPECT_EQ(w.Field(0, "spec.nodeName"), "");
}

TEST_F(KubeApiServerTest, StaleUpdateIsConflict) {
  const std::string leases =
      "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
  auto created = client_->Post(
      leases,
      R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
      R"("metadata":{"name":"lens"},"spec":{"holderIdentity":"a"}})",
      "application/json");
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 201);
  rapidjson::Document lease = Json(created->body);
  EXPECT_EQ(At(lease, "metadata.namespace"), "kube-system");
  const std::string stale = At(lease, "metadata.resourceVersion");

  auto body = [&](const std::string& holder, const std::string& rv) {
    return R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
           R"("metadata":{"name":"lens","namespace":"kube-system")" +
           (rv.empty() ? "" : R"(,"resourceVersion":")" + rv + "\"") +
           R"(},"spec":{"holderIdentity":")" + holder + "\"}}";
  };
  auto put = [&](const std::string& name, const std::string& text) {
    auto r = client_->Put(leases + "/" + name, text, "application/json");
    return r ? std::pair<int, std::string>(r->status, r->body)
             : std::pair<int, std::string>(0, "");
  };
  auto [ok, ok_body] = put("lens", body("b", stale));
  EXPECT_EQ(ok, 200);
  EXPECT_NE(At(Json(ok_body), "metadata.resourceVersion"), stale);
  auto [conflict, conflict_body] = put("lens", body("c", stale));
  EXPECT_EQ(conflict, 409);
  rapidjson::Document status = Json(conflict_body);
  EXPECT_EQ(At(status, "reason"), "Conflict");
  EXPECT_EQ(At(status, "details.kind"), "leases");
  EXPECT_EQ(At(status, "details.group"), "coordination.k8s.io");
  EXPECT_EQ(At(Json(server_->Get("coordination.k8s.io/v1", "Lease",
                                 "kube-system", "lens")),
               "spec.holderIdentity"),
            "b");
  EXPECT_EQ(put("lens", body("d", "")).first, 200);   // unconditional
  EXPECT_EQ(put("other", body("d", "")).first, 400);  // name mismatch
}

TEST_F(KubeApiServerTest, PatchesAndDeletes) {
  server_->Create(Pod("p1", "n1", "Running", R"({"app":"a","tier":"x"})"));
  const std::string path = std::string(kPods) + "/p1";
  auto merged = client_->Patch(
      path, R"({"metadata":{"labels":{"app":null,"team":"ml"}}})",
      "application/merge-patch+json");
  ASSERT_TRUE(merged);
  EXPECT_EQ(merged->status, 200);
  rapidjson::Document pod = Json(merged->body);
  EXPECT_EQ(At(pod, "metadata.labels.app"), "");
  EXPECT_EQ(At(pod, "metadata.labels.team"), "ml");
  EXPECT_EQ(At(pod, "metadata.labels.tier"), "x");
  auto json_patch = client_->Patch(path, R"([{"op":"remove","path":"/spec"}])",
                                   "application/json-patch+json");
  ASSERT_TRUE(json_patch);
  EXPECT_EQ(json_patch->status, 415);
  auto del = client_->Delete(path);
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200);
  EXPECT_EQ(At(Json(del->body), "metadata.name"), "p1");
  auto again = client_->Delete(path);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 404);
  EXPECT_EQ(At(Json(again->body), "reason"), "NotFound");
  EXPECT_EQ(At(Json(again->body), "message"), "pods \"p1\" not found");
}

TEST_F(KubeApiServerTest, RequiresBearerToken) {
  KubeApiServerOptions options;
  options.token = "s3cret";
  Start(options);
  EXPECT_EQ(GetJson("/api").first, 200);
  httplib::Client anonymous(server_->url());
  auto r = anonymous.Get("/api/v1/pods");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(At(Json(r->body), "reason"), "Unauthorized");
  anonymous.set_bearer_token_auth("wrong");
  EXPECT_EQ(anonymous.Get("/api")->status, 401);
  const auto log = server_->Requests();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[1].status, 401);
  EXPECT_EQ(log[1].verb, "list");
}

TEST_F(KubeApiServerTest, ServesTlsSignedByFixtureCa) {
  KubeApiServerOptions options;
  options.token = "t";
  options.tls = true;
  Start(options);
  ASSERT_EQ(server_->url().rfind("https://127.0.0.1:", 0), 0u);
  httplib::Client tls(server_->url());
  tls.set_ca_cert_path(KubeApiServer::CaFile());
  tls.enable_server_certificate_verification(true);
  tls.set_bearer_token_auth("t");
  auto r = tls.Get("/api/v1");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  const WatchResult w =
      RunWatch(server_->url(), "/api/v1/nodes?watch=1&timeoutSeconds=1",
               SIZE_MAX, {{"Authorization", "Bearer t"}});
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(w.error, httplib::Error::Success);
}

TEST_F(KubeApiServerTest, FailNextAnswersInjectedStatus) {
  server_->FailNext("/namespaces/default/pods", 429);
  auto r = client_->Get(kPods);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  rapidjson::Document status = Json(r->body);
  EXPECT_EQ(At(status, "reason"), "TooManyRequests");
  EXPECT_EQ(At(status, "details.retryAfterSeconds"), "1");
  EXPECT_EQ(client_->Get(kPods)->status, 200);

  server_->FailNext("/pods", 503, 2);
  EXPECT_EQ(client_->Get("/api/v1")->status, 200);  // not matching
  EXPECT_EQ(client_->Get(kPods)->status, 503);
  EXPECT_EQ(client_->Get("/api/v1/pods?watch=1")->status, 503);
  EXPECT_EQ(client_->Get(kPods)->status, 200);
}

TEST_F(KubeApiServerTest, LogsRequestsWithKubernetesVerbs) {
  server_->Create(Pod("p1"));
  server_->ClearRequests();
  GetJson("/apis/apps/v1");
  GetJson(std::string(kPods) + "?limit=10");
  GetJson(std::string(kPods) + "/p1");
  Post(kPods, Pod("p2"));
  client_->Put(std::string(kPods) + "/p2", Pod("p2", "n2"), "application/json");
  client_->Patch(std::string(kPods) + "/p2", R"({"spec":{"nodeName":"n3"}})",
                 "application/merge-patch+json");
  client_->Delete(std::string(kPods) + "/p2");
  RunWatch(server_->url(), "/api/v1/pods?watch=1", 1);
  GetJson("/api/v1/nodes/n1");
  const auto log = server_->Requests();
  ASSERT_EQ(log.size(), 9u);
  const std::vector<std::string> verbs = {"discovery", "list",   "get",
                                          "create",    "update", "patch",
                                          "delete",    "watch",  "get"};
  for (size_t i = 0; i < verbs.size(); ++i) EXPECT_EQ(log[i].verb, verbs[i]);
  EXPECT_EQ(log[0].path, "/apis/apps/v1");
  EXPECT_EQ(log[1].query, "limit=10");
  EXPECT_EQ(log[1].resource, "pods");
  EXPECT_EQ(log[1].namespace_name, "default");
  EXPECT_EQ(log[2].name, "p1");
  EXPECT_EQ(log[3].method, "POST");
  EXPECT_EQ(log[3].status, 201);
  EXPECT_EQ(log[7].namespace_name, "");
  EXPECT_EQ(log[7].status, 200);
  EXPECT_EQ(log[8].resource, "nodes");
  EXPECT_EQ(log[8].status, 404);
}

}  // namespace
}  // namespace lens::test
