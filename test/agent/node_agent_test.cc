// NodeAgent: the loop's bookkeeping with scripted sources, and the whole agent
// on fixture hosts.
#include "agent/node_agent.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "core/kernel_file.h"
#include "lens/amd_smi.h"

namespace lens {
namespace {

const std::string kHosts = std::string(LENS_FIXTURES_DIR) + "/hosts/";

// A GpuSource whose device set and values the test controls.
class ScriptedSource final : public GpuSource {
 public:
  struct State {
    std::string token = "a";
    std::vector<GpuInfo> infos;
    double utilization = 0.5;
    bool fail_sample = false;
    int scans = 0;
  };
  explicit ScriptedSource(std::shared_ptr<State> state)
      : state_(std::move(state)) {}
  std::string_view name() const override { return "scripted"; }
  StatusOr<std::vector<GpuInfo>> Scan() override {
    ++state_->scans;
    return state_->infos;
  }
  Status Sample(std::vector<GpuSample>* out) override {
    if (state_->fail_sample) return UnavailableError("device vanished");
    out->assign(state_->infos.size(), GpuSample{});
    for (auto& s : *out) s.utilization_ratio = state_->utilization;
    return OkStatus();
  }
  StatusOr<std::string> DeviceSetToken() override { return state_->token; }

 private:
  std::shared_ptr<State> state_;
};

GpuInfo Info(std::string bdf) {
  GpuInfo g;
  g.bdf = std::move(bdf);
  g.model = "Test GPU";
  return g;
}

NodeAgentOptions FixtureOptions(const std::string& host) {
  NodeAgentOptions o;
  o.roots = HostRoots::Under(kHosts + host);
  o.node_name = "node-a";
  o.nvidia_gpus = false;
  return o;
}

TEST(CollectorRegistryTest, RejectsNullAndDuplicateNames) {
  CollectorRegistry r;
  EXPECT_EQ(r.Add(nullptr).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(r.Add(NewRdmaCollector(HostRoots{})).ok());
  Status dup = r.Add(NewRdmaCollector(HostRoots{}));
  EXPECT_EQ(dup.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dup.message().find("rdma"), std::string::npos);
  EXPECT_EQ(r.size(), 1u);
}

TEST(NodeAgentTest, ScansOnceAndRescansOnlyWhenTheDeviceSetChanges) {
  auto state = std::make_shared<ScriptedSource::State>();
  state->infos = {Info("0000:0c:00.0"), Info("0000:22:00.0")};
  std::vector<std::unique_ptr<GpuSource>> sources;
  sources.push_back(std::make_unique<ScriptedSource>(state));
  CollectorRegistry r;
  ASSERT_TRUE(r.Add(NewGpuCollector(HostRoots::Under(kHosts + "empty"),
                                    std::move(sources)))
                  .ok());
  NodeAgent agent(FixtureOptions("empty"), std::move(r));
  EXPECT_EQ(agent.snapshot()->cycle, 0u);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(agent.RunOnce().ok());
  EXPECT_EQ(state->scans, 1);
  auto snap = agent.snapshot();
  EXPECT_EQ(snap->cycle, 3u);
  ASSERT_EQ(snap->gpus.size(), 2u);
  EXPECT_EQ(snap->gpus[1].index, 1);
  ASSERT_EQ(snap->gpu_samples.size(), 2u);
  EXPECT_EQ(snap->gpu_samples[0].utilization_ratio, 0.5);

  state->infos.push_back(Info("0000:38:00.0"));
  state->token = "b";
  state->utilization = 0.75;
  ASSERT_TRUE(agent.RunOnce().ok());
  EXPECT_EQ(state->scans, 2);
  snap = agent.snapshot();
  ASSERT_EQ(snap->gpus.size(), 3u);
  EXPECT_EQ(snap->gpu_samples[2].utilization_ratio, 0.75);
  ASSERT_EQ(snap->collectors.size(), 1u);
  EXPECT_EQ(snap->collectors[0].rescans, 2u);
  EXPECT_EQ(snap->collectors[0].runs, 4u);
}

TEST(NodeAgentTest, AFailedSampleIsRecordedAndForcesARescan) {
  auto state = std::make_shared<ScriptedSource::State>();
  state->infos = {Info("0000:0c:00.0")};
  std::vector<std::unique_ptr<GpuSource>> sources;
  sources.push_back(std::make_unique<ScriptedSource>(state));
  CollectorRegistry r;
  ASSERT_TRUE(r.Add(NewGpuCollector(HostRoots::Under(kHosts + "empty"),
                                    std::move(sources)))
                  .ok());
  NodeAgent agent(FixtureOptions("empty"), std::move(r));
  ASSERT_TRUE(agent.RunOnce().ok());
  state->fail_sample = true;
  Status st = agent.RunOnce();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("device vanished"), std::string::npos);
  auto snap = agent.snapshot();
  EXPECT_FALSE(snap->collectors[0].last_ok);
  EXPECT_EQ(snap->collectors[0].failures, 1u);
  EXPECT_NE(snap->collectors[0].last_error.find("device vanished"),
            std::string::npos);
  state->fail_sample = false;
  ASSERT_TRUE(agent.RunOnce().ok());
  EXPECT_EQ(state->scans, 2);  // rescanned after the failure
  EXPECT_TRUE(agent.snapshot()->collectors[0].last_ok);
  const std::string metrics = agent.RenderMetrics();
  EXPECT_NE(metrics.find(
                "lens_agent_collector_failures_total{collector=\"gpu\"} 1\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("lens_agent_collector_up{collector=\"gpu\"} 1\n"),
            std::string::npos);
}

TEST(NodeAgentTest, SlowCollectorsRunAtMostAtTheirInterval) {
  CollectorRegistry r;
  ASSERT_TRUE(r.Add(NewNodeFactsCollector(HostRoots::Under(kHosts + "empty"),
                                          std::chrono::hours(1)))
                  .ok());
  NodeAgent agent(FixtureOptions("empty"), std::move(r));
  ASSERT_TRUE(agent.RunOnce().ok());
  ASSERT_TRUE(agent.RunOnce().ok());
  auto snap = agent.snapshot();
  EXPECT_EQ(snap->cycle, 2u);
  EXPECT_EQ(snap->collectors[0].runs, 1u);
  ASSERT_TRUE(snap->facts.has_value());  // kept from the first run
  EXPECT_GT(snap->facts->cpu_count, 0);
}

TEST(NodeAgentTest, LoopRunsUntilStoppedAndReadersSeeWholeSnapshots) {
  NodeAgentOptions o = FixtureOptions("mi300x-8x-mlx5");
  o.interval = std::chrono::milliseconds(100);
  NodeAgent agent(o, DefaultNodeCollectors(o));
  ASSERT_TRUE(agent.Start().ok());
  EXPECT_EQ(agent.Start().code(), StatusCode::kFailedPrecondition);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::thread reader([&] {
    while (std::chrono::steady_clock::now() < deadline &&
           agent.snapshot()->cycle < 4) {
      auto s = agent.snapshot();
      EXPECT_EQ(s->gpus.size(), s->gpu_samples.size());
      (void)agent.RenderMetrics();
    }
  });
  reader.join();
  agent.Stop();
  agent.Stop();
  EXPECT_GE(agent.snapshot()->cycle, 4u);
  const uint64_t stopped_at = agent.snapshot()->cycle;
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_EQ(agent.snapshot()->cycle, stopped_at);
}

TEST(NodeAgentTest,
     MI300XHostReportsEightGpusAndEightHcasWithBytesFromFourOctetUnits) {
  NodeAgentOptions o = FixtureOptions("mi300x-8x-mlx5");
  NodeAgent agent(o, DefaultNodeCollectors(o));
  ASSERT_TRUE(agent.RunOnce().ok()) << agent.snapshot()->collectors.size();
  auto snap = agent.snapshot();
  ASSERT_EQ(snap->gpus.size(), 8u);
  ASSERT_EQ(snap->rdma_devices.size(), 8u);
  ASSERT_FALSE(snap->rdma_ports.empty());
  for (const GpuInfo& g : snap->gpus) {
    EXPECT_EQ(g.vendor, GpuVendor::kAmd);
    EXPECT_FALSE(g.serial.empty()) << g.bdf;
  }
  const RdmaPortCounters& p = snap->rdma_ports[0];
  StatusOr<std::string> raw = ReadKernelValue(
      o.roots.sysfs + "/class/infiniband/" + p.device + "/ports/" +
      std::to_string(p.port) + "/counters/port_xmit_data");
  ASSERT_TRUE(raw.ok()) << raw.status();
  ASSERT_TRUE(p.tx_bytes.has_value());
  EXPECT_EQ(*p.tx_bytes, std::stoull(*raw) * 4);
  ASSERT_TRUE(snap->facts.has_value());
  EXPECT_FALSE(snap->facts->kernel_release.empty());
}

TEST(NodeAgentTest, HostWithoutDevicesReportsNothingAndFailsNothing) {
  NodeAgentOptions o = FixtureOptions("empty");
  NodeAgent agent(o, DefaultNodeCollectors(o));
  ASSERT_TRUE(agent.RunOnce().ok());
  auto snap = agent.snapshot();
  EXPECT_TRUE(snap->gpus.empty());
  EXPECT_TRUE(snap->rdma_devices.empty());
  for (const CollectorState& c : snap->collectors)
    EXPECT_TRUE(c.last_ok) << c.name;
  const std::string m = agent.RenderMetrics();
  EXPECT_NE(m.find("lens_node_gpus 0\n"), std::string::npos);
  EXPECT_EQ(m.find("lens_gpu_utilization_ratio"), std::string::npos);
}

// Writes an executable stand-in for amd-smi that logs each call to
// `calls` and prints the fixture for the subcommand (or sleeps).
std::string FakeAmdSmi(const std::filesystem::path& dir,
                       const std::string& body) {
  const std::string path = (dir / "amd-smi").string();
  std::ofstream(path) << "#!/bin/sh\necho \"$1\" >> "
                      << (dir / "calls").string() << "\n"
                      << body;
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(NodeAgentTest, AmdSmiRunsOncePerRescanAndOnlyFillsWhatSysfsLacks) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("lens-amdsmi-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string smi = std::string(LENS_FIXTURES_DIR) + "/amd-smi/";
  const std::string list = smi + "mi250-mi210_rocm6.3_list.json";
  const std::string stat =
      smi + "mi250-mi210_rocm6.3_static_trailing_commas.json";
  NodeAgentOptions o = FixtureOptions("mi250-mi210");
  o.amd_smi_path =
      FakeAmdSmi(dir, "case \"$1\" in list) cat " + list + ";; static) cat " +
                          stat + ";; *) exit 3;; esac\n");
  NodeAgent agent(o, DefaultNodeCollectors(o));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(agent.RunOnce().ok());
  StatusOr<std::string> calls = ReadKernelFile((dir / "calls").string());
  ASSERT_TRUE(calls.ok()) << calls.status();
  EXPECT_EQ(*calls, "list\nstatic\n");  // once per rescan, never per cycle

  // What the agent shows is the sysfs inventory with amd-smi applied.
  auto expected = ProbeGpus(o.roots, GpuProbeOptions{true, false});
  ASSERT_TRUE(expected.ok());
  std::vector<GpuInfo> infos;
  for (const Gpu& g : *expected) infos.push_back(g.info);
  StatusOr<std::string> list_text = ReadKernelFile(list);
  StatusOr<std::string> stat_text = ReadKernelFile(stat);
  ASSERT_TRUE(list_text.ok() && stat_text.ok());
  auto parsed = ParseAmdSmiOutputs({*list_text, *stat_text});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  auto applied = ApplyAmdSmi(*parsed, &infos, nullptr);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_GT(*applied, 0u);
  auto snap = agent.snapshot();
  ASSERT_EQ(snap->gpus.size(), infos.size());
  for (size_t i = 0; i < infos.size(); ++i) {
    EXPECT_EQ(snap->gpus[i], infos[i]) << snap->gpus[i].bdf;
  }
  std::filesystem::remove_all(dir);
}

TEST(NodeAgentTest, AHangingAmdSmiIsCutOffAndSysfsStands) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("lens-amdsmi-hang-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  NodeAgentOptions o = FixtureOptions("mi300x-8x-mlx5");
  o.amd_smi_path = FakeAmdSmi(dir, "sleep 30\n");
  o.amd_smi_timeout = std::chrono::milliseconds(200);
  NodeAgent agent(o, DefaultNodeCollectors(o));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(agent.RunOnce().ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(agent.snapshot()->gpus.size(), 8u);
  std::filesystem::remove_all(dir);
}

TEST(NodeAgentTest, RejectsBadOptions) {
  NodeAgentOptions o;
  o.interval = std::chrono::milliseconds(10);
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o.interval = std::chrono::seconds(5);
  o.kubelet.url = "ftp://kubelet";
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lens
