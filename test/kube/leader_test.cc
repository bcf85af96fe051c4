// KubeLeaderElector against the in-process API server: one replica of two
// leads at a time, a stale update loses with 409, a stopped leader hands the
// lease over at once, a leader that cannot renew stops leading before the
// lease expires, and the only requests are get/create/update on its Lease.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "kube_api_server.h"
#include "kube_testing.h"
#include "lens/kube.h"

namespace lens {
namespace {

using kubetest::ConnectionTo;
using test::KubeApiServer;
using test::KubeRequest;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

KubeLeaderOptions Fast(const std::string& identity) {
  KubeLeaderOptions o;
  o.namespace_name = "lens";
  o.lease_name = "lens-controller";
  o.identity = identity;
  o.lease_duration = milliseconds(1500);
  o.renew_deadline = milliseconds(1000);
  o.retry_period = milliseconds(100);
  return o;
}

class Elector {
 public:
  Elector(KubeClient* client, KubeLeaderOptions options)
      : elector_(client, std::move(options)),
        thread_([this] { status_ = elector_.Run(); }) {}
  ~Elector() { Stop(); }
  void Stop() {
    elector_.Stop();
    if (thread_.joinable()) thread_.join();
  }
  bool leader() const { return elector_.IsLeader(); }
  const KubeLeaderElector& operator*() const { return elector_; }
  const Status& status() const { return status_; }

 private:
  KubeLeaderElector elector_;
  Status status_;
  std::thread thread_;
};

bool WaitUntil(const std::function<bool()>& done,
               milliseconds timeout = milliseconds(10000)) {
  const auto end = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

class KubeLeaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok()) << server_.error();
    for (auto* c : {&a_, &b_}) {
      auto client = KubeClient::Create(ConnectionTo(server_));
      ASSERT_TRUE(client.ok()) << client.status().message();
      *c = std::move(*client);
    }
  }
  std::string Holder() const {
    const std::string lease = server_.Get("coordination.k8s.io/v1", "Lease",
                                          "lens", "lens-controller");
    const auto at = lease.find("\"holderIdentity\":\"");
    if (at == std::string::npos) return "";
    const auto start = at + 18;
    return lease.substr(start, lease.find('"', start) - start);
  }

  KubeApiServer server_;
  std::unique_ptr<KubeClient> a_, b_;
};

TEST_F(KubeLeaderTest, OneOfTwoReplicasLeadsAndAStoppedLeaderHandsOver) {
  Elector a(a_.get(), Fast("replica-a"));
  Elector b(b_.get(), Fast("replica-b"));
  ASSERT_TRUE(WaitUntil([&] { return a.leader() || b.leader(); }));
  // For two seconds (many renewals), never both.
  const auto end = Clock::now() + milliseconds(2000);
  int samples = 0;
  while (Clock::now() < end) {
    ASSERT_FALSE(a.leader() && b.leader());
    ++samples;
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_GT(samples, 100);
  Elector& leader = a.leader() ? a : b;
  Elector& follower = a.leader() ? b : a;
  const std::string leader_id = a.leader() ? "replica-a" : "replica-b";
  EXPECT_EQ(Holder(), leader_id);
  EXPECT_EQ((*leader).transitions(), 1u);
  EXPECT_EQ((*follower).transitions(), 0u);

  // Stopping releases the lease: the other takes it well before it would
  // have expired (1.5 s).
  const auto stopped = Clock::now();
  leader.Stop();
  EXPECT_TRUE(leader.status().ok()) << leader.status().message();
  ASSERT_TRUE(WaitUntil([&] { return follower.leader(); }, milliseconds(1400)));
  EXPECT_LT(Clock::now() - stopped, milliseconds(1000));
  EXPECT_NE(Holder(), leader_id);
}

TEST_F(KubeLeaderTest, AStaleUpdateLosesWith409) {
  Elector a(a_.get(), Fast("replica-a"));
  ASSERT_TRUE(WaitUntil([&] { return a.leader(); }));
  const std::string lease =
      server_.Get("coordination.k8s.io/v1", "Lease", "lens", "lens-controller");
  ASSERT_NE(lease, "");
  // Someone writes the lease with a resourceVersion that is no longer
  // current: the server refuses it. A renewal moves it on first.
  ASSERT_TRUE(WaitUntil([&] {
    return server_.Get("coordination.k8s.io/v1", "Lease", "lens",
                       "lens-controller") != lease;
  }));
  auto r = b_->Request("PUT",
                       "/apis/coordination.k8s.io/v1/namespaces/lens/leases/"
                       "lens-controller",
                       lease);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 409) << r->body;
  EXPECT_EQ(KubeError("PUT", b_->server(), "/lease", *r).code(),
            StatusCode::kAborted);
  EXPECT_TRUE(a.leader());
  EXPECT_EQ(Holder(), "replica-a");
}

TEST_F(KubeLeaderTest,
       ALeaderThatCannotRenewStopsLeadingBeforeTheLeaseExpires) {
  Elector a(a_.get(), Fast("replica-a"));
  ASSERT_TRUE(WaitUntil([&] { return a.leader(); }));
  const auto down = Clock::now();
  server_.Stop();
  ASSERT_TRUE(WaitUntil([&] { return !a.leader(); }, milliseconds(3000)));
  // Within the renew deadline (1 s) plus a retry, and before the lease
  // duration (1.5 s) after which another replica may take it.
  EXPECT_LT(Clock::now() - down, milliseconds(1500));
  ASSERT_TRUE(server_.Start());
  ASSERT_TRUE(WaitUntil([&] { return a.leader(); }));
  EXPECT_EQ((*a).transitions(), 3u);  // led, lost, led again
}

// A Lease answer that does not parse (here: no resourceVersion) is an
// error, never a blank record to write over without a resourceVersion.
TEST_F(KubeLeaderTest, NeverWritesAfterALeaseAnswerItCannotRead) {
  Elector a(a_.get(), Fast("replica-a"));
  ASSERT_TRUE(WaitUntil([&] { return a.leader(); }));
  server_.ClearRequests();
  server_.FailNext("leases/lens-controller", 200, 3,
                   R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
                   R"("metadata":{"name":"lens-controller"},"spec":{}})");
  // The three answers are taken, then the elector renews as before.
  ASSERT_TRUE(WaitUntil([&] {
    int updates_after = 0, gets = 0;
    for (const KubeRequest& r : server_.Requests()) {
      if (r.verb == "get") ++gets;
      if (r.verb == "update" && gets > 3) ++updates_after;
    }
    return updates_after > 0;
  }));
  int gets = 0;
  for (const KubeRequest& r : server_.Requests()) {
    if (r.verb == "get") ++gets;
    if (gets > 3) break;
    EXPECT_NE(r.verb, "update") << "written after answer " << gets;
  }
  EXPECT_EQ(Holder(), "replica-a");
}

TEST_F(KubeLeaderTest, TouchesOnlyItsOwnLeaseWithGetCreateAndUpdate) {
  {
    Elector a(a_.get(), Fast("replica-a"));
    Elector b(b_.get(), Fast("replica-b"));
    ASSERT_TRUE(WaitUntil([&] { return a.leader() || b.leader(); }));
    // Renewals and the follower's reads: a few rounds of each.
    ASSERT_TRUE(WaitUntil([&] {
      int updates = 0, gets = 0;
      for (const KubeRequest& r : server_.Requests()) {
        updates += r.verb == "update";
        gets += r.verb == "get";
      }
      return updates >= 3 && gets >= 6;
    }));
  }
  const std::set<std::string> allowed{"get", "create", "update"};
  ASSERT_FALSE(server_.Requests().empty());
  for (const KubeRequest& r : server_.Requests()) {
    EXPECT_TRUE(allowed.count(r.verb)) << r.method << " " << r.path;
    EXPECT_EQ(r.group, "coordination.k8s.io") << r.path;
    EXPECT_EQ(r.resource, "leases");
    EXPECT_EQ(r.namespace_name, "lens");
    if (r.verb != "create") EXPECT_EQ(r.name, "lens-controller");
  }
}

TEST_F(KubeLeaderTest, RefusesOptionsThatCannotWork) {
  KubeLeaderOptions o = Fast("");
  EXPECT_EQ(KubeLeaderElector(a_.get(), o).Run().code(),
            StatusCode::kInvalidArgument);
  o = Fast("x");
  o.renew_deadline = o.lease_duration;
  const Status st = KubeLeaderElector(a_.get(), o).Run();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("renew deadline"), std::string::npos);
}

}  // namespace
}  // namespace lens
