// The `jobs:` keys of the scheduled jobs: decoding, located errors, and the
// service options built from them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "service/config.h"
#include "service/jobs_service.h"

namespace lens {
namespace {

ConfigLoadOptions NoEnv() {
  ConfigLoadOptions o;
  o.getenv = [](const std::string&) -> std::optional<std::string> {
    return std::nullopt;
  };
  return o;
}

TEST(ConfigJobsTest, DefaultsAreTheDocumentedOnes) {
  auto c = ParseConfig("", "inline", NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  const JobsOptions& j = c->jobs;
  EXPECT_TRUE(j.scheduled_jobs);
  EXPECT_TRUE(j.leader_election);
  EXPECT_EQ(j.lease_name, "lens-jobs");
  EXPECT_EQ(j.scheduled.agent_selector,
            "app.kubernetes.io/name=lens-node-agent");
  EXPECT_EQ(j.scheduled.agent_port, 8989);
  EXPECT_EQ(j.scheduled.gpu_allocation.interval, std::chrono::seconds(30));
  EXPECT_EQ(j.scheduled.gpu_allocation.timeout, std::chrono::seconds(27));
  EXPECT_EQ(j.scheduled.pod_status.interval, std::chrono::seconds(5));
  EXPECT_EQ(j.scheduled.storage_scan.interval, std::chrono::seconds(60));
}

TEST(ConfigJobsTest, ListsAsTextOrYamlAndDurations) {
  auto c = ParseConfig(
      "jobs:\n"
      "  agents:\n"
      "    - node-a=http://10.0.0.5:8989\n"
      "    - node-b=https://10.0.0.6:8989\n"
      "  storageMounts: data=juicefs:/mnt/jfs,scratch=local:/scratch\n"
      "  nodeInfoInterval: 2s\n"
      "  agentTimeout: 750ms\n"
      "  compatNames: true\n"
      "  leaderElection: false\n",
      "inline", NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  const ScheduledJobsOptions& decoded = c->jobs.scheduled;
  ASSERT_EQ(decoded.agents.size(), 2u);
  EXPECT_EQ(decoded.agents[0].node, "node-a");
  EXPECT_EQ(decoded.agents[0].url, "http://10.0.0.5:8989");
  EXPECT_EQ(decoded.node_info.interval, std::chrono::seconds(2));
  EXPECT_EQ(decoded.agent_timeout, std::chrono::milliseconds(750));
  c->database.url = "sqlite:///tmp/x.db";
  auto o = JobsServiceOptionsFromConfig(*c);
  ASSERT_TRUE(o.ok()) << o.status();
  ASSERT_EQ(o->jobs.agents.size(), 2u);
  EXPECT_EQ(o->jobs.agents[1].node, "node-b");
  EXPECT_EQ(o->jobs.agents[1].url, "https://10.0.0.6:8989");
  ASSERT_EQ(o->jobs.storage_mounts.size(), 2u);
  EXPECT_EQ(o->jobs.storage_mounts[0].name, "data");
  EXPECT_EQ(o->jobs.storage_mounts[0].kind, "juicefs");
  EXPECT_EQ(o->jobs.storage_mounts[0].path, "/mnt/jfs");
  EXPECT_EQ(o->jobs.node_info.interval, std::chrono::seconds(2));
  EXPECT_EQ(o->jobs.node_info.timeout, std::chrono::milliseconds(1800));
  EXPECT_TRUE(o->jobs.compat_names);
  EXPECT_FALSE(o->leader_election);
  EXPECT_TRUE(o->kube.server.empty());  // no cluster
  EXPECT_EQ(o->leader.lease_name, "lens-jobs");
}

TEST(ConfigJobsTest, BadValuesAreLocatedAndSayWhatToWrite) {
  struct Case {
    const char* yaml;
    const char* says;
  };
  const Case cases[] = {
      {"jobs:\n  agents: node-a\n", "is not node=http(s)://host:port"},
      {"jobs:\n  agents: a=ftp://x\n", "is not node=http(s)://host:port"},
      {"jobs:\n  agents:\n    - a=http://x,b=http://y\n",
       "must not contain a comma"},
      {"jobs:\n  storageMounts: data=juicefs:relative\n",
       "is not name=kind:/absolute/path"},
      {"jobs:\n  podStatusInterval: 10ms\n", "at least 100ms"},
      {"jobs:\n  agentPort: 0\n", "jobs.agentPort"},
      {"jobs:\n  agentScheme: ftp\n", "agentScheme: must be http or https"},
      {"jobs:\n  kubeconfig: /k\n  inCluster: true\n", "not both"},
      {"jobs:\n  nodeInfoIntervl: 1s\n", "unknown key"},
  };
  for (const Case& c : cases) {
    auto config = ParseConfig(c.yaml, "inline", NoEnv());
    ASSERT_FALSE(config.ok()) << c.yaml;
    EXPECT_NE(config.status().message().find(c.says), std::string::npos)
        << c.yaml << " -> " << config.status().message();
  }
}

TEST(ConfigJobsTest, AMissingAgentTokenFileIsNamed) {
  auto c = ParseConfig("jobs:\n  agentTokenFile: /nonexistent/token\n",
                       "inline", NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  auto o = JobsServiceOptionsFromConfig(*c);
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("jobs.agentTokenFile"), std::string::npos)
      << o.status();
}

}  // namespace
}  // namespace lens
