// KubeClient and KubeDiscovery against the in-process API server: TLS with
// the cluster CA, bearer tokens (from a file that rotates), errors that name
// the server and the status but never the token, watch streams and
// discovery of any kind, custom resources included.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
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
using test::KubeApiServer;
using test::KubeApiServerOptions;

constexpr char kToken[] = "lens-test-token-5f2c9d";

std::unique_ptr<KubeClient> ClientOrDie(const KubeConnection& c) {
  auto client = KubeClient::Create(c);
  EXPECT_TRUE(client.ok()) << client.status().message();
  return client.ok() ? std::move(*client) : nullptr;
}

TEST(KubeClientTest, TalksTlsWithTheClusterCaAndABearerToken) {
  KubeApiServer server({.token = kToken, .tls = true});
  ASSERT_TRUE(server.ok()) << server.error();
  ASSERT_NE(server.Create(PodJson("ml", "trainer-0", 8)), "");
  auto client = ClientOrDie(ConnectionTo(server, kToken));
  ASSERT_NE(client, nullptr);
  auto r = client->Request("GET", "/api/v1/namespaces/ml/pods/trainer-0");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_NE(r->body.find("\"trainer-0\""), std::string::npos);
  // Keep-alive: a second request reuses the pooled handle and works too.
  r = client->Request("GET", "/api/v1/namespaces/ml/pods");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
}

TEST(KubeClientTest, ErrorsNameServerPathAndStatusButNeverTheToken) {
  KubeApiServer server({.token = kToken, .tls = true});
  ASSERT_TRUE(server.ok()) << server.error();
  const std::string wrong = "not-the-token-8e1f";
  auto client = ClientOrDie(ConnectionTo(server, wrong));
  ASSERT_NE(client, nullptr);
  const std::string path = "/api/v1/pods";
  auto r = client->Request("GET", path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 401);
  const Status error = KubeError("GET", client->server(), path, *r);
  EXPECT_EQ(error.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(error.message().find(server.url() + path), std::string::npos)
      << error.message();
  EXPECT_NE(error.message().find("401"), std::string::npos);
  EXPECT_EQ(error.message().find(wrong), std::string::npos);

  // A 404 carries the Status message of the server.
  client = ClientOrDie(ConnectionTo(server, kToken));
  r = client->Request("GET", "/api/v1/namespaces/ml/pods/absent");
  ASSERT_TRUE(r.ok());
  const Status missing = KubeError("GET", client->server(),
                                   "/api/v1/namespaces/ml/pods/absent", *r);
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing.message();
  EXPECT_NE(missing.message().find("absent"), std::string::npos);
}

TEST(KubeClientTest, RereadsTheTokenFileWhenItRotates) {
  KubeApiServer server({.token = kToken});
  ASSERT_TRUE(server.ok()) << server.error();
  const std::string file =
      ::testing::TempDir() + "kube-token-" + std::to_string(::getpid());
  std::ofstream(file) << "expired-token\n";
  KubeConnection c = ConnectionTo(server);
  c.token_file = file;
  auto client = ClientOrDie(c);
  ASSERT_NE(client, nullptr);
  auto r = client->Request("GET", "/api/v1/pods");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 401);
  // The kubelet rewrites the projected token; the next request uses it.
  std::ofstream(file, std::ios::trunc) << kToken << "\n";
  std::filesystem::last_write_time(
      file, std::filesystem::last_write_time(file) + std::chrono::seconds(2));
  r = client->Request("GET", "/api/v1/pods");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200) << r->body;
  std::filesystem::remove(file);
}

TEST(KubeClientTest, ATokenWinsOverATokenFileAsKubectlHasIt) {
  KubeApiServer server({.token = kToken});
  ASSERT_TRUE(server.ok()) << server.error();
  KubeConnection c = ConnectionTo(server, kToken);
  c.token_file = "/nonexistent/token";
  auto client = ClientOrDie(c);
  ASSERT_NE(client, nullptr);
  auto r = client->Request("GET", "/api/v1/pods");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
}

TEST(KubeClientTest, RefusesAServerItCannotVerify) {
  KubeApiServer server({.tls = true});
  ASSERT_TRUE(server.ok()) << server.error();
  KubeConnection c = ConnectionTo(server);
  c.ca_file.clear();  // the system CAs do not know the test CA
  auto client = ClientOrDie(c);
  ASSERT_NE(client, nullptr);
  auto r = client->Request("GET", "/api/v1/pods");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find(server.url()), std::string::npos)
      << r.status().message();

  c.insecure_skip_tls_verify = true;
  client = ClientOrDie(c);
  r = client->Request("GET", "/api/v1/pods");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
}

TEST(KubeClientTest, CreateRefusesMissingCredentialFilesByName) {
  KubeConnection c;
  c.server = "https://127.0.0.1:1";
  c.ca_file = "/nonexistent/ca.crt";
  auto client = KubeClient::Create(c);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), StatusCode::kNotFound);
  EXPECT_NE(client.status().message().find("/nonexistent/ca.crt"),
            std::string::npos)
      << client.status().message();
  EXPECT_FALSE(KubeClient::Create(KubeConnection{}).ok());
}

TEST(KubeClientTest, AnUnreachableServerIsUnavailable) {
  KubeApiServer server;
  ASSERT_TRUE(server.ok());
  const std::string url = server.url();
  server.Stop();
  KubeConnection c;
  c.server = url;
  auto client = ClientOrDie(c);
  auto r = client->Request("GET", "/api/v1/pods");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find(url), std::string::npos);
}

TEST(KubeClientTest, StreamsWatchEventsLineByLineUntilStopped) {
  KubeApiServer server({.bookmark_interval_ms = 100});
  ASSERT_TRUE(server.ok());
  ASSERT_NE(server.Create(PodJson("ml", "a")), "");
  const std::string rv = std::to_string(server.resource_version());
  auto client = ClientOrDie(ConnectionTo(server));
  std::atomic<bool> stop{false};
  std::vector<std::string> lines;
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    server.Create(PodJson("ml", "b"));
    server.Create(PodJson("ml", "c"));
  });
  KubeResponse refused;
  const Status st = client->Stream(
      "/api/v1/namespaces/ml/pods?watch=true&resourceVersion=" + rv,
      "application/json",
      [&](std::string_view line) {
        lines.emplace_back(line);
        return lines.size() < 2;  // the handler ends the stream
      },
      &stop, &refused);
  writer.join();
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(refused.status, 0);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("\"ADDED\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("\"b\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("\"c\""), std::string::npos) << lines[1];

  // `stop` ends a quiet stream within about a second.
  stop = true;
  const auto start = std::chrono::steady_clock::now();
  const Status cancelled = client->Stream(
      "/api/v1/namespaces/ml/pods?watch=true&resourceVersion=" +
          std::to_string(server.resource_version()),
      "application/json", [](std::string_view) { return true; }, &stop,
      &refused);
  EXPECT_EQ(cancelled.code(), StatusCode::kCancelled) << cancelled.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(KubeClientTest, AStreamRefusedByTheServerReturnsItsAnswer) {
  KubeApiServer server({.token = kToken});
  ASSERT_TRUE(server.ok());
  auto client = ClientOrDie(ConnectionTo(server, "wrong"));
  KubeResponse refused;
  int lines = 0;
  const Status st = client->Stream(
      "/api/v1/pods?watch=true", "application/json",
      [&](std::string_view) { return ++lines > 0; }, nullptr, &refused);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(lines, 0);
  EXPECT_NE(refused.body.find("Status"), std::string::npos);
}

TEST(KubeDiscoveryTest, ResolvesBuiltInAndCustomKindsFromTheServer) {
  KubeApiServer server;
  ASSERT_TRUE(server.ok());
  server.AddResource({.group = "example.com",
                      .version = "v1",
                      .resource = "trainingruns",
                      .kind = "TrainingRun",
                      .namespaced = true});
  auto client = ClientOrDie(ConnectionTo(server));
  KubeDiscovery discovery(client.get());
  auto deployments = discovery.ResourceFor("apps/v1", "Deployment");
  ASSERT_TRUE(deployments.ok()) << deployments.status().message();
  EXPECT_EQ(deployments->resource, "deployments");
  EXPECT_EQ(deployments->group, "apps");
  EXPECT_TRUE(deployments->namespaced);
  auto nodes = discovery.ResourceFor("v1", "Node");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  EXPECT_EQ(nodes->resource, "nodes");
  EXPECT_FALSE(nodes->namespaced);
  EXPECT_EQ(nodes->Path("", "gpu-1"), "/api/v1/nodes/gpu-1");
  auto pytorch = discovery.ResourceFor("kubeflow.org/v1", "PyTorchJob");
  ASSERT_TRUE(pytorch.ok()) << pytorch.status().message();
  EXPECT_EQ(pytorch->Path("ml", "llama"),
            "/apis/kubeflow.org/v1/namespaces/ml/pytorchjobs/llama");
  auto custom = discovery.ResourceFor("example.com/v1", "TrainingRun");
  ASSERT_TRUE(custom.ok()) << custom.status().message();
  EXPECT_EQ(custom->resource, "trainingruns");

  EXPECT_EQ(discovery.ResourceFor("example.com/v1", "Nope").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(discovery.ResourceFor("nothere.io/v9", "Thing").status().code(),
            StatusCode::kNotFound);

  // Each group/version document is fetched once.
  server.ClearRequests();
  ASSERT_TRUE(discovery.ResourceFor("apps/v1", "ReplicaSet").ok());
  ASSERT_TRUE(discovery.ResourceFor("apps/v1", "Deployment").ok());
  EXPECT_TRUE(server.Requests().empty());
}

TEST(KubeQueryEscapeTest, KeepsUnreservedAndEncodesEverythingElse) {
  EXPECT_EQ(KubeQueryEscape("app.kubernetes.io/name=lens-node-agent"),
            "app.kubernetes.io%2Fname%3Dlens-node-agent");
  EXPECT_EQ(KubeQueryEscape("a b&c~_"), "a%20b%26c~_");
  EXPECT_EQ(KubeQueryEscape(std::string("\xff\x00", 2)), "%FF%00");
  EXPECT_EQ(KubeQueryEscape(""), "");
}

}  // namespace
}  // namespace lens
