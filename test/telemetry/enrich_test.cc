// Enrichment by the ownership valid at each sample's timestamp: pods whose
// names are reused, a GPU passed from one pod to another, series that are
// not ours or match nothing, and the original's workload_ copies.
#include "telemetry/enrich.h"

#include <gtest/gtest.h>

#include <map>

namespace lens::telemetry {
namespace {

std::shared_ptr<const Owner> MakeOwner(std::string pod_uid, std::string uid,
                                       std::string name) {
  return std::make_shared<const Owner>(
      Owner{pod_uid, uid, name, "PyTorchJob", "ml"});
}

struct Out {
  std::vector<std::map<std::string, std::string>> labels;
  std::vector<std::vector<int64_t>> timestamps;
  std::vector<std::vector<std::string>> names_in_order;
};

Out EnrichAndDecode(Enricher& e, const OwnershipIndex& index,
                    RemoteWriteEncoder& in, EnrichStats* stats) {
  RemoteWriteRequest request;
  EXPECT_TRUE(DecodeRemoteWrite(in.Finish(), {}, &request).ok());
  RemoteWriteEncoder enc;
  *stats = e.Enrich(request, index, &enc);
  RemoteWriteRequest back;
  EXPECT_TRUE(DecodeRemoteWrite(enc.Finish(), {}, &back).ok());
  Out out;
  for (const WireSeries& s : back.series) {
    std::map<std::string, std::string> m;
    std::vector<std::string> order;
    for (const WireLabel& l : back.LabelsOf(s)) {
      m[std::string(l.name)] = std::string(l.value);
      order.emplace_back(l.name);
    }
    std::vector<int64_t> ts;
    for (const WireSample& x : back.SamplesOf(s)) ts.push_back(x.timestamp_ms);
    out.labels.push_back(m);
    out.timestamps.push_back(ts);
    out.names_in_order.push_back(order);
  }
  return out;
}

TEST(EnrichTest, APodNameReusedByAnotherWorkloadSplitsTheSeriesWhereItChanged) {
  OwnershipIndex index;
  index.AddPod("ml", "llama-0", {1000, 5000, MakeOwner("pod-1", "w-1", "a")});
  index.AddPod("ml", "llama-0",
               {5000, kOpenEnd, MakeOwner("pod-2", "w-2", "b")});
  index.Seal();
  RemoteWriteEncoder in;
  const WireLabel labels[] = {{"Hostname", "node-c"},
                              {"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                              {"gpu", "0"},
                              {"namespace", "ml"},
                              {"pod", "llama-0"}};
  const WireSample samples[] = {{90, 500}, {91, 2000}, {92, 4000}, {93, 6000}};
  in.AddSeries(labels, samples);
  Enricher e({});
  EnrichStats stats;
  Out out = EnrichAndDecode(e, index, in, &stats);
  ASSERT_EQ(out.labels.size(), 3u);
  // Before the first pod: as it came.
  EXPECT_EQ(out.timestamps[0], (std::vector<int64_t>{500}));
  EXPECT_FALSE(out.labels[0].count("workload_uid"));
  EXPECT_EQ(out.timestamps[1], (std::vector<int64_t>{2000, 4000}));
  EXPECT_EQ(out.labels[1].at("workload_uid"), "w-1");
  EXPECT_EQ(out.labels[1].at("pod_uid"), "pod-1");
  EXPECT_EQ(out.labels[1].at("workload_kind"), "PyTorchJob");
  EXPECT_EQ(out.labels[1].at("workload_namespace"), "ml");
  EXPECT_EQ(out.labels[1].at("gpu"), "0");
  EXPECT_EQ(out.timestamps[2], (std::vector<int64_t>{6000}));
  EXPECT_EQ(out.labels[2].at("workload_name"), "b");
  // Labels stay sorted by name, as remote write requires.
  for (const auto& order : out.names_in_order) {
    EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  }
  EXPECT_EQ(stats.samples_in, 4u);
  EXPECT_EQ(stats.samples_enriched, 3u);
  EXPECT_EQ(stats.series_split, 1u);
  EXPECT_EQ(stats.series_out, 3u);
}

TEST(EnrichTest, AGpuPassedFromOnePodToAnotherIsAttributedPerSample) {
  OwnershipIndex index;
  auto first = MakeOwner("pod-a", "w-a", "pretrain");
  auto second = MakeOwner("pod-b", "w-b", "finetune");
  for (const char* id : {"692353001198", "index:2"}) {
    index.AddDevice("node-a", id, {0, 3000, first});
    index.AddDevice("node-a", id, {3000, kOpenEnd, second});
  }
  index.Seal();
  RemoteWriteEncoder in;
  // AMD device-metrics-exporter: no pod labels on an idle-looking series.
  const WireLabel amd[] = {{"__name__", "gpu_gfx_activity"},
                           {"gpu_id", "2"},
                           {"hostname", "node-a"},
                           {"serial_number", "692353001198"}};
  const WireSample s1[] = {{100, 1000}, {100, 2000}, {0, 3000}, {5, 4000}};
  in.AddSeries(amd, s1);
  // The same GPU known only by its index (a Lens series).
  const WireLabel by_index[] = {{"__name__", "lens_gpu_utilization_ratio"},
                                {"gpu", "2"},
                                {"node", "node-a"}};
  const WireSample s2[] = {{1, 3500}};
  in.AddSeries(by_index, s2);
  Enricher e({});
  EnrichStats stats;
  Out out = EnrichAndDecode(e, index, in, &stats);
  ASSERT_EQ(out.labels.size(), 3u);
  EXPECT_EQ(out.labels[0].at("workload_name"), "pretrain");
  EXPECT_EQ(out.timestamps[0], (std::vector<int64_t>{1000, 2000}));
  EXPECT_EQ(out.labels[1].at("workload_name"), "finetune");
  EXPECT_EQ(out.timestamps[1], (std::vector<int64_t>{3000, 4000}));
  EXPECT_EQ(out.labels[2].at("workload_uid"), "w-b");
  EXPECT_EQ(stats.samples_enriched, 5u);
}

TEST(EnrichTest, WhatIsNotOursOrMatchesNothingPassesUnchanged) {
  OwnershipIndex index;
  index.AddPod("ml", "llama-0", {0, kOpenEnd, MakeOwner("p", "w", "n")});
  index.Seal();
  RemoteWriteEncoder in;
  const WireLabel other[] = {{"__name__", "node_cpu_seconds_total"},
                             {"namespace", "ml"},
                             {"pod", "llama-0"}};
  const WireLabel unknown[] = {{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                               {"namespace", "ml"},
                               {"pod", "someone-else"}};
  const WireLabel done[] = {{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                            {"namespace", "ml"},
                            {"pod", "llama-0"},
                            {"workload_uid", "from-an-earlier-hop"}};
  const WireSample s[] = {{1, 10}};
  in.AddSeries(other, s);
  in.AddSeries(unknown, s);
  in.AddSeries(done, s, std::string("\x1a\x00", 2));
  const std::string proto = in.proto();
  RemoteWriteRequest request;
  ASSERT_TRUE(DecodeRemoteWrite(in.Finish(), {}, &request).ok());
  RemoteWriteEncoder out;
  Enricher e({});
  const EnrichStats stats = e.Enrich(request, index, &out);
  EXPECT_EQ(out.proto(), proto);  // byte for byte
  EXPECT_EQ(stats.samples_enriched, 0u);
  EXPECT_EQ(stats.series_out, 3u);
}

TEST(EnrichTest, CompatNamesAddTheOriginalsWorkloadCopy) {
  OwnershipIndex index;
  index.AddPod("ml", "llama-0", {0, kOpenEnd, MakeOwner("p", "w", "n")});
  index.Seal();
  RemoteWriteEncoder in;
  const WireLabel l[] = {{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                         {"namespace", "ml"},
                         {"pod", "llama-0"}};
  const WireSample s[] = {{1, 10}};
  in.AddSeries(l, s);
  EnrichOptions o;
  o.compat_names = true;
  Enricher e(o);
  EnrichStats stats;
  Out out = EnrichAndDecode(e, index, in, &stats);
  ASSERT_EQ(out.labels.size(), 2u);
  EXPECT_EQ(out.labels[0].at("__name__"), "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(out.labels[1].at("__name__"), "workload_DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(out.labels[1].at("workload_uid"), "w");
}

}  // namespace
}  // namespace lens::telemetry
