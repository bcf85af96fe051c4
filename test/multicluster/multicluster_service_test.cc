// lens-multicluster as a service and as its own process, against a home and
// two member API servers (TLS, bearer tokens): both members published; a
// changed storage Secret republished within a refresh; a member down kept
// stale and back; members added and removed without a restart; a bad
// kubeconfig reported while the others publish; the output Secret updated,
// not duplicated, after a restart and after a 409; every request inside the
// documented RBAC; no credential in the log or /metrics; the daemon's exit
// codes.
#include "service/multicluster_service.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <set>

#include "lens/log.h"
#include "loopback_traffic.h"
#include "multicluster_testing.h"

namespace lens::multicluster_testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using test::KubeRequest;

constexpr char kDbA2[] = "postgresql://lens:pg-pass-s3cret-aaaa@db2.a/lens";

std::string Get(const std::string& url, const std::string& path) {
  httplib::Client client(url);
  auto res = client.Get(path);
  return res ? std::to_string(res->status) + "\n" + res->body : "no answer";
}

class MultiClusterServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ConfigureLogging({LogLevel::kDebug,
                      LogFormat::kText,
                      [this](std::string_view line) {
                        std::lock_guard lock(mu_);
                        log_ += std::string(line) + "\n";
                      },
                      {}});
  }
  void TearDown() override {
    services_.clear();
    ConfigureLogging({});
  }
  MultiClusterService* Start(const MultiClusterServiceOptions& options) {
    auto s = MultiClusterService::Start(options);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) return nullptr;
    services_.push_back(std::move(*s));
    return services_.back().get();
  }
  std::string Log() {
    std::lock_guard lock(mu_);
    return log_;
  }
  bool PublishedBoth() { return Published(*w_.home).size() == 2; }

  World w_;
  std::mutex mu_;
  std::string log_;  // GUARDED_BY(mu_)
  std::vector<std::unique_ptr<MultiClusterService>> services_;
};

TEST_F(MultiClusterServiceTest, PublishesEveryMembersEndpoints) {
  MultiClusterService* s = Start(w_.Options());
  ASSERT_TRUE(s);
  ASSERT_TRUE(WaitUntil([&] { return PublishedBoth(); })) << Log();
  const std::vector<ClusterEndpoints> d = Published(*w_.home);
  EXPECT_EQ(d[0].name, "cluster-a");
  EXPECT_EQ(d[0].database_url, kDbA);
  EXPECT_EQ(d[0].prometheus_url, kPromA);
  EXPECT_EQ(d[0].prometheus_token, kPromTokenA);
  EXPECT_FALSE(d[0].stale);
  EXPECT_GT(d[0].updated_unix, 1700000000);
  EXPECT_EQ(d[1].database_url, kDbB);
  const std::string secret =
      w_.home->Get("v1", "Secret", "lens", "lens-clusters-config");
  EXPECT_NE(
      secret.find(R"("app.kubernetes.io/managed-by":"lens-multicluster")"),
      std::string::npos)
      << secret;
  EXPECT_NE(secret.find(R"("type":"Opaque")"), std::string::npos) << secret;
  // The Secret is on the home API server before its answer is back here.
  EXPECT_TRUE(WaitUntil([&] { return s->Published(); })) << Log();
  EXPECT_TRUE(
      WaitUntil([&] { return Get(s->http_url(), "/readyz") == "200\nok\n"; }));
  const std::string metrics = Get(s->http_url(), "/metrics");
  EXPECT_NE(metrics.find("lens_multicluster_clusters 2"), std::string::npos)
      << metrics;
  EXPECT_NE(
      metrics.find("lens_multicluster_cluster_up{cluster=\"cluster-a\"} 1"),
      std::string::npos)
      << metrics;
  EXPECT_NE(
      metrics.find("lens_multicluster_publishes_total{result=\"created\"} 1"),
      std::string::npos)
      << metrics;
}

TEST_F(MultiClusterServiceTest, AChangedStorageSecretIsRepublished) {
  ASSERT_TRUE(Start(w_.Options()));
  ASSERT_TRUE(WaitUntil([&] { return PublishedBoth(); })) << Log();
  SetStorage(*w_.a, kDbA2);
  // Within a refresh (200ms) or two.
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto d = Published(*w_.home);
        const ClusterEndpoints* a = Find(d, "cluster-a");
        return a && a->database_url == kDbA2 && a->prometheus_url.empty();
      },
      milliseconds(3000)))
      << Log();
}

// Members read again and found the same: nothing to write (every lens-api
// mounts the Secret), for ten refreshes.
TEST_F(MultiClusterServiceTest, AnUnchangedFleetWritesNothing) {
  ASSERT_TRUE(Start(w_.Options()));
  ASSERT_TRUE(WaitUntil([&] { return PublishedBoth(); })) << Log();
  // A member read again: the refresh that published has ended.
  w_.a->ClearRequests();
  ASSERT_TRUE(WaitUntil([&] { return !w_.a->Requests().empty(); })) << Log();
  w_.home->ClearRequests();
  w_.a->ClearRequests();
  // Five refreshes more.
  ASSERT_TRUE(WaitUntil([&] { return w_.a->Requests().size() >= 5; })) << Log();
  int writes = 0;
  for (const KubeRequest& r : w_.home->Requests()) {
    writes += r.method == "PUT" || r.method == "POST";
  }
  EXPECT_EQ(writes, 0) << Log();
  EXPECT_GE(w_.a->Requests().size(), 5u);  // it did read, at every refresh
}

TEST_F(MultiClusterServiceTest, ADownMemberIsStaleUntilItIsBack) {
  MultiClusterService* s = Start(w_.Options());
  ASSERT_TRUE(s);
  ASSERT_TRUE(WaitUntil([&] { return PublishedBoth(); })) << Log();
  w_.b->Stop();
  ASSERT_TRUE(WaitUntil([&] {
    auto d = Published(*w_.home);
    return d.size() == 2 && d[1].stale;
  })) << Log();
  const ClusterEndpoints stale = Published(*w_.home)[1];
  EXPECT_EQ(stale.database_url, kDbB);
  // Two refreshes more (the member that is up read twice).
  w_.a->ClearRequests();
  ASSERT_TRUE(WaitUntil([&] { return w_.a->Requests().size() >= 2; })) << Log();
  // Still the last good read's time; the other member keeps moving.
  EXPECT_EQ(Published(*w_.home)[1].updated_unix, stale.updated_unix);
  EXPECT_FALSE(Published(*w_.home)[0].stale);
  const std::string metrics = Get(s->http_url(), "/metrics");
  EXPECT_NE(
      metrics.find("lens_multicluster_cluster_up{cluster=\"cluster-b\"} 0"),
      std::string::npos)
      << metrics;
  EXPECT_NE(
      metrics.find("lens_multicluster_cluster_stale{cluster=\"cluster-b\"} 1"),
      std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("lens_multicluster_reads_total{cluster=\"cluster-b\","
                         "result=\"error\"}"),
            std::string::npos)
      << metrics;
  EXPECT_NE(Log().find("member cluster unavailable"), std::string::npos);
  ASSERT_TRUE(w_.b->Start());
  EXPECT_TRUE(WaitUntil([&] {
    auto d = Published(*w_.home);
    return d.size() == 2 && !d[1].stale;
  })) << Log();
}

TEST_F(MultiClusterServiceTest, MembersAreAddedAndRemovedWithoutRestart) {
  w_.SetClusters({{"cluster-a", MemberKubeconfig(*w_.a, kTokenA)}});
  ASSERT_TRUE(Start(w_.Options()));
  ASSERT_TRUE(WaitUntil([&] { return Published(*w_.home).size() == 1; }));
  w_.SetClusters({{"cluster-a", MemberKubeconfig(*w_.a, kTokenA)},
                  {"cluster-b", MemberKubeconfig(*w_.b, kTokenB)}});
  ASSERT_TRUE(WaitUntil([&] { return PublishedBoth(); })) << Log();
  w_.SetClusters({{"cluster-b", MemberKubeconfig(*w_.b, kTokenB)}});
  EXPECT_TRUE(WaitUntil([&] {
    auto d = Published(*w_.home);
    return d.size() == 1 && d[0].name == "cluster-b";
  })) << Log();
}

TEST_F(MultiClusterServiceTest, ABadKubeconfigIsReportedAndOthersPublished) {
  w_.SetClusters(
      {{"cluster-a", MemberKubeconfig(*w_.a, kTokenA)},
       {"cluster-b", MemberKubeconfig(*w_.b, kTokenB)},
       {"broken", "users: [{token: " + std::string(kTokenB) + "}]\n  - : ["}});
  MultiClusterService* s = Start(w_.Options());
  ASSERT_TRUE(s);
  ASSERT_TRUE(WaitUntil([&] { return PublishedBoth(); })) << Log();
  const std::string metrics = Get(s->http_url(), "/metrics");
  EXPECT_NE(metrics.find("lens_multicluster_clusters 3"), std::string::npos);
  EXPECT_NE(metrics.find("lens_multicluster_cluster_up{cluster=\"broken\"} 0"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("lens_multicluster_reads_total{cluster=\"broken\","
                         "result=\"bad_kubeconfig\"}"),
            std::string::npos)
      << metrics;
  const std::string log = Log();
  EXPECT_NE(log.find("Secret lens/lens-clusters key broken: not a valid "
                     "kubeconfig"),
            std::string::npos)
      << log;
}

TEST_F(MultiClusterServiceTest, ARestartUpdatesTheOutputSecret) {
  // Left by an earlier run: updated, not created again.
  PutSecret(*w_.home, "lens", "lens-clusters-config",
            {{"clusters.yaml", "clusters: []\n"}});
  ASSERT_TRUE(Start(w_.Options()));
  ASSERT_TRUE(WaitUntil([&] { return PublishedBoth(); })) << Log();
  services_.clear();
  SetStorage(*w_.a, kDbA2);
  ASSERT_TRUE(Start(w_.Options()));
  ASSERT_TRUE(WaitUntil([&] {
    const ClusterEndpoints* a = nullptr;
    auto d = Published(*w_.home);
    a = Find(d, "cluster-a");
    return a && a->database_url == kDbA2;
  })) << Log();
  int updates = 0;
  for (const KubeRequest& r : w_.home->Requests()) {
    if (r.resource != "secrets") continue;
    EXPECT_NE(r.verb, "create") << r.path;
    if (r.verb == "update" && r.status == 200) ++updates;
  }
  EXPECT_GE(updates, 2);
}

TEST_F(MultiClusterServiceTest, AConflictIsReadAgainAndRetried) {
  MultiClusterService* s = Start(w_.Options());
  ASSERT_TRUE(s);
  ASSERT_TRUE(WaitUntil([&] { return PublishedBoth(); })) << Log();
  // Someone else writes it: the resourceVersion the service holds is old.
  PutSecret(*w_.home, "lens", "lens-clusters-config",
            {{"clusters.yaml", "clusters: []\n"}});
  SetStorage(*w_.a, kDbA2);
  ASSERT_TRUE(WaitUntil([&] {
    auto d = Published(*w_.home);
    const ClusterEndpoints* a = Find(d, "cluster-a");
    return a && a->database_url == kDbA2;
  })) << Log();
  bool conflict = false;
  for (const KubeRequest& r : w_.home->Requests()) {
    conflict |= r.verb == "update" && r.status == 409;
  }
  EXPECT_TRUE(conflict);
  EXPECT_NE(Get(s->http_url(), "/metrics")
                .find("lens_multicluster_publishes_total{result=\"error\"} 0"),
            std::string::npos);
}

TEST_F(MultiClusterServiceTest, ReadyOnlyAfterTheFirstPublish) {
  w_.home->Stop();
  MultiClusterService* s = Start(w_.Options());
  ASSERT_TRUE(s);
  // It tried the home API server (down) and said so.
  ASSERT_TRUE(WaitUntil([&] {
    return Log().find("error=") != std::string::npos;
  })) << Log();
  EXPECT_EQ(Get(s->http_url(), "/readyz").substr(0, 4), "503\n");
  EXPECT_EQ(Get(s->http_url(), "/healthz"), "200\nok\n");
  ASSERT_TRUE(w_.home->Start());
  EXPECT_TRUE(WaitUntil([&] { return PublishedBoth(); }, milliseconds(15000)))
      << Log();
  EXPECT_TRUE(
      WaitUntil([&] { return Get(s->http_url(), "/readyz") == "200\nok\n"; }));
}

TEST_F(MultiClusterServiceTest, TwoReplicasElectOneWriter) {
  MultiClusterServiceOptions o = w_.Options();
  o.leader_election = true;
  o.leader.identity = "replica-1";
  MultiClusterService* one = Start(o);
  o.leader.identity = "replica-2";
  MultiClusterService* two = Start(o);
  ASSERT_TRUE(one && two);
  ASSERT_TRUE(WaitUntil([&] { return PublishedBoth(); })) << Log();
  EXPECT_NE(one->IsLeader(), two->IsLeader());
  // Both ready: the follower stands by.
  EXPECT_TRUE(WaitUntil([&] {
    return Get(one->http_url(), "/readyz") == "200\nok\n" &&
           Get(two->http_url(), "/readyz") == "200\nok\n";
  }));
}

// docs/multicluster.md's RBAC, request by request.
TEST_F(MultiClusterServiceTest, RequestsStayInsideTheDocumentedRbac) {
  MultiClusterServiceOptions o = w_.Options();
  o.leader_election = true;
  ASSERT_TRUE(Start(o));
  ASSERT_TRUE(WaitUntil([&] { return PublishedBoth(); })) << Log();
  SetStorage(*w_.a, kDbA2);
  ASSERT_TRUE(WaitUntil([&] {
    auto d = Published(*w_.home);
    return d.size() == 2 && d[0].database_url == kDbA2;
  }));
  services_.clear();  // releases the Lease too
  ASSERT_FALSE(w_.home->Requests().empty());
  for (const KubeRequest& r : w_.home->Requests()) {
    const std::string what = r.method + " " + r.path + "?" + r.query;
    EXPECT_EQ(r.namespace_name, "lens") << what;
    if (r.group == "coordination.k8s.io") {
      EXPECT_EQ(r.resource, "leases") << what;
      if (!r.name.empty()) EXPECT_EQ(r.name, "lens-multicluster") << what;
      EXPECT_TRUE(
          std::set<std::string>({"get", "create", "update"}).count(r.verb))
          << what;
      continue;
    }
    ASSERT_EQ(r.group, "") << what;
    ASSERT_EQ(r.resource, "secrets") << what;
    if (r.verb == "list" || r.verb == "watch") {
      EXPECT_NE(r.query.find("fieldSelector=metadata.name%3Dlens-clusters"),
                std::string::npos)
          << what;
    } else if (r.verb == "get" || r.verb == "update") {
      EXPECT_EQ(r.name, "lens-clusters-config") << what;
    } else {
      EXPECT_EQ(r.verb, "create") << what;
    }
  }
  for (const auto* member : {w_.a.get(), w_.b.get()}) {
    ASSERT_FALSE(member->Requests().empty());
    for (const KubeRequest& r : member->Requests()) {
      EXPECT_EQ(r.verb, "get") << r.method << " " << r.path;
      EXPECT_EQ(r.resource, "secrets") << r.path;
      EXPECT_EQ(r.namespace_name, "lens") << r.path;
      EXPECT_EQ(r.name, "lens-storage") << r.path;
    }
  }
}

TEST_F(MultiClusterServiceTest, NoCredentialInTheLogOrMetrics) {
  w_.SetClusters(
      {{"cluster-a", MemberKubeconfig(*w_.a, kTokenA)},
       {"cluster-b", MemberKubeconfig(*w_.b, kTokenB)},
       {"broken", "token: " + std::string(kTokenB) + "\n  - ["},
       {"wrong-token", MemberKubeconfig(*w_.a, "member-token-s3cret-nope")}});
  MultiClusterService* s = Start(w_.Options());
  ASSERT_TRUE(s);
  ASSERT_TRUE(WaitUntil([&] { return PublishedBoth(); })) << Log();
  SetStorage(*w_.a, "mysql://x:pg-pass-s3cret-cccc@db/lens");  // invalid
  w_.b->Stop();
  ASSERT_TRUE(WaitUntil([&] {
    auto d = Published(*w_.home);
    return d.size() == 2 && d[0].stale && d[1].stale;
  })) << Log();
  std::string seen = Log();
  for (const char* path : {"/metrics", "/readyz", "/healthz"}) {
    seen += Get(s->http_url(), path);
  }
  for (const MemberStatus& m : s->Members()) seen += m.error + m.server;
  EXPECT_NE(seen.find("wrong-token"), std::string::npos);
  for (const std::string& secret : kSecrets) {
    EXPECT_EQ(seen.find(secret), std::string::npos) << secret << "\n" << seen;
  }
}

#ifdef LENS_MULTICLUSTER_BIN
class MultiClusterDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("multicluster-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    kubeconfig_ = (dir_ / "home.kubeconfig").string();
    ASSERT_TRUE(
        test::WriteFile(
            kubeconfig_,
            "current-context: home\nclusters: [{name: home, cluster: "
            "{server: '" +
                w_.home->url() + "', certificate-authority: '" +
                KubeApiServer::CaFile() +
                "'}}]\nusers: [{name: lens, user: {token: " + kHomeToken +
                "}}]\ncontexts: [{name: home, context: {cluster: "
                "home, user: lens}}]\n")
            .ok());
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      test::WaitExit(pid_, seconds(10));
    }
    fs::remove_all(dir_);
  }
  std::string Config(const std::string& body) {
    const std::string path = (dir_ / "lens.yaml").string();
    EXPECT_TRUE(test::WriteFile(path, body).ok());
    return path;
  }

  World w_;
  fs::path dir_;
  std::string kubeconfig_;
  pid_t pid_ = -1;
};

TEST_F(MultiClusterDaemonTest, RefusesBadConfigurationWithTwo) {
  const std::pair<std::string, std::string> cases[] = {
      {"multiCluster: {kubeconfig: " + kubeconfig_ + ", refresh: 100ms}\n",
       "multiCluster.refresh: must be at least 1s"},
      {"multiCluster: {clusterSecret: x}\n",
       "multiCluster.clusterSecret: unknown key"},
      {"multiCluster: {refresh: 5s}\n", "no home API server"},
      {"multiCluster: {kubeconfig: /nonexistent/kubeconfig}\n",
       "/nonexistent/kubeconfig"}};
  for (const auto& [config, says] : cases) {
    auto run = test::RunCommand(
        {LENS_MULTICLUSTER_BIN, "--config", Config(config)}, seconds(20));
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(test::Describe(run->wait_status), "exit status 2")
        << config << run->err;
    EXPECT_NE(run->err.find(says), std::string::npos) << config << run->err;
  }
}

TEST_F(MultiClusterDaemonTest, PublishesAndStopsOnSigterm) {
  const std::string log = (dir_ / "daemon.log").string();
  pid_ = test::Spawn({LENS_MULTICLUSTER_BIN, "--config",
                      Config("logging: {level: debug}\n"
                             "multiCluster:\n  kubeconfig: " +
                             kubeconfig_ +
                             "\n  refresh: 1s\n  identity: daemon-1\n"
                             "  listenAddress: 127.0.0.1:0\n")},
                     log);
  ASSERT_GT(pid_, 0);
  auto bound = test::WaitForLoggedPort(log, pid_, "http=");
  ASSERT_TRUE(bound.ok()) << bound.status();
  const int port = *bound;
  ASSERT_TRUE(WaitUntil([&] { return Published(*w_.home).size() == 2; },
                        milliseconds(20000)))
      << test::ReadFile(log);
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  EXPECT_TRUE(WaitUntil([&] { return Get(url, "/readyz") == "200\nok\n"; }));
  const std::string metrics = Get(url, "/metrics");
  EXPECT_NE(metrics.find("lens_multicluster_leader 1"), std::string::npos)
      << metrics;
  ::kill(pid_, SIGTERM);
  auto status = test::WaitExit(pid_, seconds(20));
  ASSERT_TRUE(status.has_value()) << "lens-multicluster ignored SIGTERM";
  pid_ = -1;
  EXPECT_EQ(test::Describe(*status), "exit status 0") << test::ReadFile(log);
  const std::string seen = test::ReadFile(log) + metrics;
  for (const std::string& secret : kSecrets) {
    EXPECT_EQ(seen.find(secret), std::string::npos) << secret << "\n" << seen;
  }
}
#endif

}  // namespace
}  // namespace lens::multicluster_testing
