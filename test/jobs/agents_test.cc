// The node agent's /report as lens-jobs reads it: the route of a real node
// service on a fixture host decoded field by field, and what is refused.
#include "scheduled/agents.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "http/http.h"
#include "service/node_service.h"

namespace lens::scheduled {
namespace {

const std::string kHosts = std::string(LENS_FIXTURES_DIR) + "/hosts/";

std::unique_ptr<NodeService> Serve(const std::string& host) {
  Config c;
  c.node_exporter.sysfs_root = kHosts + host + "/sys";
  c.node_exporter.procfs_root = kHosts + host + "/proc";
  c.node_exporter.dev_root = kHosts + host + "/dev";
  c.node_exporter.listen_address = "127.0.0.1:0";
  c.node_exporter.nvidia_gpus = false;
  auto options = NodeServiceOptionsFromConfig(c, kNodeAgent);
  EXPECT_TRUE(options.ok()) << options.status();
  if (!options.ok()) return nullptr;
  options->node_name = "node-a";
  auto service = NodeService::Start(*options);
  EXPECT_TRUE(service.ok()) << service.status();
  if (!service.ok()) return nullptr;
  for (int i = 0; i < 200 && (*service)->agent()->snapshot()->cycle == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::move(*service);
}

TEST(AgentReportTest, DecodesTheRealRouteOfAnMi300xHost) {
  auto service = Serve("mi300x-8x-mlx5");
  ASSERT_NE(service, nullptr);
  const std::string url = service->url();
  httplib::Client c("127.0.0.1", std::stoi(url.substr(url.rfind(':') + 1)));
  auto res = c.Get("/report");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  auto r = ParseAgentReport(res->body);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->node_name, "node-a");
  EXPECT_EQ(r->cpu_model, "AMD EPYC 9654 96-Core Processor");
  EXPECT_EQ(r->memory_bytes, int64_t{1584710736} * 1024);
  EXPECT_GT(r->cpu_count, 0);
  EXPECT_EQ(r->driver_version, "6.8.5");
  ASSERT_EQ(r->gpus.size(), 8u);
  int busy = 0;
  for (size_t i = 0; i < r->gpus.size(); ++i) {
    const AgentGpu& g = r->gpus[i];
    EXPECT_EQ(g.device.gpu_index, static_cast<int32_t>(i));
    EXPECT_EQ(g.device.vendor, "amd");
    EXPECT_EQ(g.device.serial.size(), 12u) << g.device.serial;
    EXPECT_EQ(g.device.bdf.size(), 12u) << g.device.bdf;  // 0000:11:00.0
    EXPECT_GT(g.device.vram_bytes, 0);
    ASSERT_TRUE(g.utilization_ratio.has_value());
    if (*g.utilization_ratio == 1.0) {
      ++busy;
      EXPECT_EQ(g.device.serial, "692353001198");
    } else {
      EXPECT_EQ(*g.utilization_ratio, 0.0);
    }
  }
  EXPECT_EQ(busy, 1);
  ASSERT_EQ(r->rdma.size(), 8u);
  EXPECT_EQ(r->rdma[0].name, "mlx5_0");
  EXPECT_EQ(r->rdma[0].node_guid, "946d:ae03:004a:1b20");
  EXPECT_FALSE(r->rdma[0].fw_version.empty());
  EXPECT_FALSE(r->rdma[0].bdf.empty());
}

TEST(AgentReportTest, RefusesWhatIsNotAReportAndSaysWhat) {
  struct Case {
    const char* body;
    const char* says;
  };
  const Case cases[] = {
      {"", "not a JSON object"},
      {"<html>502</html>", "not a JSON object"},
      {"[1,2]", "not a JSON object"},
      {"{\"code\":0}", "no \"data\" object"},
      {"{\"data\":{\"gpus\":{}}}", "gpus: not an array"},
      {"{\"data\":{\"gpus\":[7]}}", "gpus[0]: not an object"},
      {"{\"data\":{\"gpus\":[{\"serial\":\"x\"}]}}", "gpus[0]: no valid index"},
      {"{\"data\":{\"gpus\":[{\"index\":-1}]}}", "gpus[0]: no valid index"},
      {"{\"data\":{\"rdma\":[{\"node_guid\":\"x\"}]}}", "rdma[0]: no name"},
      {"{\"data\":{\"node\":\"x\"}}", "node: not an object"},
  };
  for (const Case& c : cases) {
    auto r = ParseAgentReport(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.says), std::string::npos)
        << c.body << ": " << r.status().message();
  }
  std::string many = "{\"data\":{\"gpus\":[";
  for (int i = 0; i < 1025; ++i) {
    many += (i ? ",{\"index\":" : "{\"index\":") + std::to_string(i) + "}";
  }
  many += "]}}";
  EXPECT_NE(ParseAgentReport(many).status().message().find("more than 1024"),
            std::string::npos);
}

TEST(AgentReportTest, OutOfRangeSamplesAreClampedAndNonNumbersIgnored) {
  auto r = ParseAgentReport(
      "{\"data\":{\"gpus\":[{\"index\":0,\"sample\":{\"utilization_ratio\":"
      "1.7}},{\"index\":1,\"sample\":{\"utilization_ratio\":null}},"
      "{\"index\":2,\"sample\":{\"utilization_ratio\":\"high\"}}]}}");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->gpus[0].utilization_ratio, 1.0);
  EXPECT_FALSE(r->gpus[1].utilization_ratio.has_value());
  EXPECT_FALSE(r->gpus[2].utilization_ratio.has_value());
}

// Agents served by this process (our HTTP server, a canned report each).
class CannedAgents {
 public:
  explicit CannedAgents(int n) {
    for (int i = 0; i < n; ++i) {
      HttpServerOptions o;
      o.listen = "127.0.0.1:0";
      auto server = HttpServer::Create(o);
      EXPECT_TRUE(server.ok()) << server.status();
      const std::string body =
          "{\"code\":0,\"data\":{\"node_name\":\"n" + std::to_string(i) +
          "\",\"gpus\":[{\"index\":0,\"serial\":\"S" + std::to_string(i) +
          "\",\"sample\":{\"utilization_ratio\":0.5}}]},\"message\":"
          "\"success\"}";
      (*server)->Handle(
          "GET", "/report",
          [body](const HttpRequest&, HttpResponse* r) { r->body = body; });
      EXPECT_TRUE((*server)->Start().ok());
      targets.push_back({"n" + std::to_string(i), (*server)->url()});
      servers.push_back(std::move(*server));
    }
  }
  std::vector<std::unique_ptr<HttpServer>> servers;
  std::vector<NodeAgentTarget> targets;
};

TEST(AgentPoolTest, ReadsAgentsInParallelAndKeepsTheLastGoodAnswer) {
  CannedAgents agents(12);
  ScheduledJobsOptions o;
  o.agents = agents.targets;
  o.agent_concurrency = 4;
  o.agent_timeout = std::chrono::milliseconds(2000);
  AgentPool pool(o, nullptr);
  const auto far = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  Status discovery;
  auto views = pool.Refresh(std::chrono::milliseconds(0), far, &discovery);
  EXPECT_TRUE(discovery.ok()) << discovery;
  ASSERT_EQ(views.size(), 12u);
  for (const AgentView& v : views) {
    EXPECT_TRUE(v.ok) << v.node << ": " << v.error;
    ASSERT_TRUE(v.report.has_value()) << v.node;
    EXPECT_EQ(v.report->node_name, v.node);
    EXPECT_EQ(v.report->gpus[0].device.serial, "S" + v.node.substr(1));
    EXPECT_TRUE(v.seen_at.has_value());
  }
  // Three stop answering: stale, their last report kept, the others fresh.
  for (int i = 0; i < 3; ++i) agents.servers[i]->Stop();
  views = pool.Refresh(std::chrono::milliseconds(0), far);
  int stale = 0;
  for (const AgentView& v : views) {
    ASSERT_TRUE(v.report.has_value()) << v.node;
    if (!v.ok) {
      ++stale;
      EXPECT_FALSE(v.error.empty());
      EXPECT_NE(v.error.find(v.url), std::string::npos) << v.error;
    }
  }
  EXPECT_EQ(stale, 3);
  // Answers younger than max_age are not read again.
  for (int i = 3; i < 12; ++i) agents.servers[i]->Stop();
  views = pool.Refresh(std::chrono::hours(1), far);
  int ok = 0;
  for (const AgentView& v : views) ok += v.ok;
  EXPECT_EQ(ok, 9);
}

TEST(AgentPoolTest, NothingStartsPastTheDeadline) {
  CannedAgents agents(2);
  ScheduledJobsOptions o;
  o.agents = agents.targets;
  AgentPool pool(o, nullptr);
  auto views =
      pool.Refresh(std::chrono::milliseconds(0),
                   std::chrono::steady_clock::now() - std::chrono::seconds(1));
  ASSERT_EQ(views.size(), 2u);
  for (const AgentView& v : views) {
    EXPECT_FALSE(v.ok);
    EXPECT_NE(v.error.find("ran out of time"), std::string::npos) << v.error;
  }
}

}  // namespace
}  // namespace lens::scheduled
