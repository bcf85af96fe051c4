// NodeServiceOptionsFromConfig: each program's parts, from one config.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "service/node_service.h"

namespace lens {
namespace {

Config WithJobs() {
  Config c;
  c.node_exporter.jobs_address = "jobs:50051";
  c.node_exporter.containerd_socket = "/run/test/containerd.sock";
  return c;
}

TEST(NodeServiceOptionsTest, TheNodeAgentRunsProbesTrackingAndTheStream) {
  auto o =
      NodeServiceOptionsFromConfig(WithJobs(), kNodeAgent | kNodeContainers);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->agent.has_value());
  ASSERT_TRUE(o->containers.has_value());
  EXPECT_EQ(o->containers->containerd_socket, "/run/test/containerd.sock");
  EXPECT_FALSE(o->containers->pod_resources_socket.empty());
  ASSERT_TRUE(o->events.has_value());
  EXPECT_EQ(o->events->target, "jobs:50051");
  EXPECT_FALSE(o->flows.has_value());
  EXPECT_EQ(o->agent_http.listen, "0.0.0.0:8989");
  EXPECT_FALSE(o->node_name.empty());
}

TEST(NodeServiceOptionsTest, NetflowTracksContainersButNeverStreamsEvents) {
  auto o =
      NodeServiceOptionsFromConfig(WithJobs(), kNodeFlows | kNodeContainers);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->agent.has_value());
  ASSERT_TRUE(o->containers.has_value());
  EXPECT_TRUE(o->containers->pod_resources_socket.empty());
  EXPECT_FALSE(o->events.has_value());  // the node agent sends them
  ASSERT_TRUE(o->flows.has_value());
  EXPECT_TRUE(o->flows->required);
  EXPECT_EQ(o->flows->http.listen, "0.0.0.0:8990");
  Config c = WithJobs();
  c.netflow.procfs_root = "/host/proc";
  auto host = NodeServiceOptionsFromConfig(c, kNodeFlows | kNodeContainers);
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(host->roots.procfs, "/host/proc");  // the tracker's too
  EXPECT_EQ(host->flows->monitor.proc_root, "/host/proc");
}

TEST(NodeServiceOptionsTest, ContainersOffInTheConfigStayOff) {
  Config c = WithJobs();
  c.node_exporter.containers = false;
  auto o = NodeServiceOptionsFromConfig(
      c, kNodeAgent | kNodeContainers | kNodeFlows);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->containers.has_value());
  EXPECT_FALSE(o->events.has_value());
}

TEST(NodeServiceOptionsTest, OneMachineRunsWhatItCanAndSharesTheToken) {
  const std::string token = testing::TempDir() + "lens-one-machine-token";
  std::ofstream(token) << "s3cret\n";
  Config c = WithJobs();  // its containerd socket does not exist here
  c.node_exporter.bearer_token_file = token;
  constexpr unsigned kAll = kNodeAgent | kNodeContainers | kNodeFlows;
  auto o = NodeServiceOptionsFromConfig(c, kAll | kNodeOnOneMachine);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->containers.has_value()) << "no containerd socket here";
  ASSERT_TRUE(o->flows.has_value());
  EXPECT_FALSE(o->flows->required);
  EXPECT_EQ(o->flows->http.bearer_token, "s3cret");
  EXPECT_EQ(o->agent_http.bearer_token, "s3cret");
  // Without the bit the same config keeps its flows port open and asks for
  // tracking (the tracker keeps retrying containerd).
  auto cluster = NodeServiceOptionsFromConfig(c, kAll);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_TRUE(cluster->containers.has_value());
  EXPECT_TRUE(cluster->flows->required);
  EXPECT_TRUE(cluster->flows->http.bearer_token.empty());
  std::remove(token.c_str());
}

TEST(NodeServiceOptionsTest, HostRootsThatDoNotExistAreErrors) {
  Config c;
  c.node_exporter.sysfs_root = "/nonexistent/sys";
  auto o = NodeServiceOptionsFromConfig(c, kNodeAgent);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(
      o.status().message().find("nodeExporter.sysfsRoot: /nonexistent/sys"),
      std::string::npos)
      << o.status();
  c = Config();
  c.node_exporter.procfs_root = "/nonexistent/proc";
  o = NodeServiceOptionsFromConfig(c, kNodeAgent);
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("nodeExporter.procfsRoot"),
            std::string::npos)
      << o.status();
}

TEST(NodeServiceOptionsTest, EventsWithoutTrackingAreRejected) {
  NodeServiceOptions o;
  o.events.emplace();
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  Config c;
  c.netflow.bearer_token_file = "/nonexistent/netflow-token";
  auto bad = NodeServiceOptionsFromConfig(c, kNodeFlows);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("netflow.bearerTokenFile"),
            std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace lens
