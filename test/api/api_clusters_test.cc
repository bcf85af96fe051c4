// lens-api serving `cluster=<name>` for every cluster of lens-multicluster's
// directory file (api.clustersFile): each member from its own store, the
// file re-read when it changes (no restart), a stale member flagged, a bad
// or missing file keeping the last good directory, an unknown cluster 404,
// and no response or log line carrying a member's credentials.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "command.h"
#include "core/cluster_directory.h"
#include "lens/store.h"
#include "service/api_service.h"

namespace lens {
namespace {

namespace fs = std::filesystem;

class ApiClustersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "api-clusters-" + std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // Each cluster's store holds one node named after it, with its GPUs.
    for (const auto& [name, gpus] :
         {std::pair{"home", 8}, {"east", 16}, {"west", 4}}) {
      auto store = Store::Open(Url(name));
      ASSERT_TRUE(store.ok()) << store.status();
      NodeRecord node;
      node.name = std::string(name) + "-node";
      node.status = "Ready";
      node.gpu_count = gpus;
      node.updated_at = Timestamp(std::chrono::seconds(1795624473));
      ASSERT_TRUE((*store)->nodes().UpsertNode(node).ok());
    }
    file_ = dir_ + "/clusters.yaml";
    Publish({Member("east", false)});
    ApiServiceOptions options;
    options.database_url = Url("home");
    options.http.listen = "127.0.0.1:0";
    options.api.cluster = "home";
    options.dashboard = false;
    ClusterDirectoryOptions d;
    d.path = file_;
    d.recheck = std::chrono::milliseconds(0);
    // Requests wait for a member's open here (it is quick); how a slow one
    // is answered is tested on its own.
    d.open_wait = std::chrono::seconds(60);
    options.clusters = d;
    auto service = ApiService::Start(options);
    ASSERT_TRUE(service.ok()) << service.status();
    service_ = std::move(*service);
    port_ = std::stoi(
        service_->http_url().substr(service_->http_url().rfind(':') + 1));
  }
  void TearDown() override {
    service_.reset();
    fs::remove_all(dir_);
  }

  std::string Url(const std::string& name) const {
    return "sqlite://" + dir_ + "/" + name + ".db";
  }
  ClusterEndpoints Member(const std::string& name, bool stale) const {
    ClusterEndpoints c;
    c.name = name;
    c.database_url = Url(name);
    c.stale = stale;
    c.updated_unix = 1795624000;
    return c;
  }
  // Writes the directory as a Secret volume updates a key: a new file
  // renamed over the old one.
  void Publish(const std::vector<ClusterEndpoints>& clusters) {
    auto text = RenderClusterDirectory(clusters);
    ASSERT_TRUE(text.ok()) << text.status();
    ASSERT_TRUE(test::WriteFile(file_ + ".new", *text).ok());
    fs::rename(file_ + ".new", file_);
    // A later mtime than the last write even on a coarse clock.
    fs::last_write_time(file_, fs::file_time_type::clock::now() +
                                   std::chrono::seconds(++generation_));
  }
  // GET /api/v1/clusters?cluster=<name>: status and body.
  std::pair<int, std::string> Overview(const std::string& cluster) {
    httplib::Client client("127.0.0.1", port_);
    auto res = client.Get("/api/v1/clusters?cluster=" + cluster);
    if (!res) return {0, ""};
    return {res->status, res->body};
  }

  std::string dir_, file_;
  int generation_ = 0;
  std::unique_ptr<ApiService> service_;
  int port_ = 0;
};

TEST_F(ApiClustersTest, EachClusterIsServedFromItsOwnStore) {
  auto [home_status, home] = Overview("home");
  EXPECT_EQ(home_status, 200) << home;
  EXPECT_NE(home.find("\"name\":\"home\""), std::string::npos) << home;
  EXPECT_NE(home.find("\"total\":8"), std::string::npos) << home;
  auto [east_status, east] = Overview("east");
  EXPECT_EQ(east_status, 200) << east;
  EXPECT_NE(east.find("\"name\":\"east\""), std::string::npos) << east;
  EXPECT_NE(east.find("\"stale\":false"), std::string::npos) << east;
  EXPECT_NE(east.find("\"total\":16"), std::string::npos) << east;
  httplib::Client client("127.0.0.1", port_);
  auto nodes = client.Get("/api/v1/nodes?cluster=east");
  ASSERT_TRUE(nodes);
  EXPECT_NE(nodes->body.find("east-node"), std::string::npos) << nodes->body;
  EXPECT_EQ(nodes->body.find("home-node"), std::string::npos) << nodes->body;
  // Without `cluster`, the API's own.
  auto own = client.Get("/api/v1/nodes");
  ASSERT_TRUE(own);
  EXPECT_NE(own->body.find("home-node"), std::string::npos);
  // A member's URL (its path here; a password in PostgreSQL's) never shows.
  EXPECT_EQ(east.find(dir_), std::string::npos);
  EXPECT_EQ(Overview("nowhere").first, 404);
}

TEST_F(ApiClustersTest, ChangesToTheFileApplyWithoutARestart) {
  ASSERT_EQ(Overview("west").first, 404);
  Publish({Member("east", true), Member("west", false)});
  auto [west_status, west] = Overview("west");
  EXPECT_EQ(west_status, 200) << west;
  EXPECT_NE(west.find("\"total\":4"), std::string::npos) << west;
  auto [east_status, east] = Overview("east");
  EXPECT_EQ(east_status, 200);
  EXPECT_NE(east.find("\"stale\":true"), std::string::npos) << east;
  // A member's store moves: the next request reads the new one.
  ClusterEndpoints moved = Member("east", false);
  moved.database_url = Url("west");
  Publish({moved});
  EXPECT_NE(Overview("east").second.find("\"total\":4"), std::string::npos);
  EXPECT_EQ(Overview("west").first, 404);  // removed
}

TEST_F(ApiClustersTest, ABadOrMissingFileKeepsTheLastGoodDirectory) {
  ASSERT_EQ(Overview("east").first, 200);
  ASSERT_TRUE(test::WriteFile(file_, "clusters: [{name: Bad!}]\n").ok());
  fs::last_write_time(
      file_, fs::file_time_type::clock::now() + std::chrono::seconds(100));
  EXPECT_EQ(Overview("east").first, 200);
  fs::remove(file_);
  EXPECT_EQ(Overview("east").first, 200);
  Publish({Member("west", false)});
  EXPECT_EQ(Overview("west").first, 200);
  EXPECT_EQ(Overview("east").first, 404);
}

TEST_F(ApiClustersTest, AMemberWhoseStoreCannotOpenIs503NamingTheCluster) {
  ClusterEndpoints broken = Member("east", false);
  broken.database_url = "sqlite://" + dir_ + "/no/such/dir/x.db";
  Publish({broken});
  auto [status, body] = Overview("east");
  EXPECT_EQ(status, 503) << body;
  EXPECT_NE(body.find("cluster \\\"east\\\""), std::string::npos) << body;
}

// A member whose database accepts connections and never answers: every
// request is answered Unavailable naming the cluster without waiting for
// the connection (opened on the directory's own thread), and once the open
// fails the failure is remembered with a backoff.
TEST_F(ApiClustersTest, AnUnreachableMemberNeverHoldsARequest) {
  const int silent = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(silent, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(silent, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(::listen(silent, 16), 0);
  ASSERT_EQ(::getsockname(silent, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ClusterEndpoints hung = Member("east", false);
  hung.database_url =
      "postgresql://lens@127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) +
      "/lens?connect_timeout=60";
  Publish({hung});
  ClusterDirectoryOptions d;
  d.path = file_;
  d.recheck = std::chrono::milliseconds(0);
  d.open_wait = std::chrono::milliseconds(0);
  d.retry_min = std::chrono::hours(1);
  d.retry_max = std::chrono::hours(1);
  auto directory = NewClusterDirectoryFile(d);
  for (int i = 0; i < 5; ++i) {
    auto h = directory->Find("east");
    EXPECT_EQ(h.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(h.status().message().find("cluster \"east\""), std::string::npos)
        << h.status();
  }
  // Still opening: the silent server has every connection in its backlog.
  // Closing it resets them, and the open fails.
  ::close(silent);
  std::string last;
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (last.find("next try in") == std::string::npos &&
         std::chrono::steady_clock::now() < until) {
    last = directory->Find("east").status().message();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(last.find("cluster \"east\""), std::string::npos) << last;
  EXPECT_NE(last.find("next try in 3600s"), std::string::npos) << last;
}

}  // namespace
}  // namespace lens
