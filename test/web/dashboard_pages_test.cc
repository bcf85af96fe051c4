// The dashboard's workload and flow pages in headless Chromium against the
// REST API over a seeded store (dashboard_fixture.h): lists, filters, pages,
// refresh, training progress, goodput and stragglers, and the flows page.
#include "dashboard_fixture.h"

namespace lens::test {
namespace {

// A suite name of its own: each file has its own copy of the fixture.
using DashboardPagesTest = DashboardTest;

TEST_F(DashboardPagesTest, WorkloadListFiltersAndLinks) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  const std::string all = Load("#/workloads", "workloads");
  EXPECT_THAT(all, HasSubstr("2 workloads"));
  EXPECT_THAT(all, HasSubstr(std::string("href=\"#/workloads/") + kLlamaUid));
  EXPECT_THAT(all, HasSubstr(std::string("href=\"#/workloads/") + kBertUid));
  EXPECT_THAT(all, HasSubstr("PyTorchJob"));
  EXPECT_THAT(all, HasSubstr("Succeeded"));

  const std::string running = Load("#/workloads?status=Running&range=6h");
  EXPECT_THAT(running, HasSubstr("1 workload matching"));
  EXPECT_THAT(running, HasSubstr("llama-pretrain"));
  EXPECT_THAT(running, Not(HasSubstr("bert-eval")));
  // Links keep the range.
  EXPECT_THAT(running,
              HasSubstr(std::string("#/workloads/") + kLlamaUid + "?range=6h"));
}

TEST_F(DashboardPagesTest, WorkloadListPages) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  std::vector<WorkloadRecord> batch(30);
  for (int i = 0; i < 30; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "batch-job-%02d", i);
    batch[i].uid = std::string("uid-") + name;
    batch[i].kind = "Job";
    batch[i].name = name;
    batch[i].namespace_name = "batch";
    batch[i].status = "Succeeded";
    batch[i].created_at = batch[i].updated_at =
        Timestamp(std::chrono::seconds(1700000000 + i));
  }
  ASSERT_TRUE(store_->pods().UpsertWorkloads(batch).ok());
  const std::string dom =
      Load("#/workloads?namespace=batch&sort=name:asc&page=2");
  EXPECT_THAT(dom, HasSubstr("26–30 of 30"));
  EXPECT_THAT(dom, HasSubstr("batch-job-25"));
  EXPECT_THAT(dom, HasSubstr("batch-job-29"));
  EXPECT_THAT(dom, Not(HasSubstr("batch-job-24")));
  EXPECT_THAT(dom, HasSubstr("page=1\">← Previous"));
}

TEST_F(DashboardPagesTest, RefreshKeepsTheFilteredList) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  // 16 s of virtual time: one refresh after the first render.
  const std::string dom = Load("#/workloads?namespace=ml-research", "", "ready",
                               std::chrono::milliseconds(16000));
  EXPECT_EQ(Attribute(dom, "data-renders"), "2");
  EXPECT_THAT(dom, HasSubstr("llama-pretrain"));
  EXPECT_THAT(dom, Not(HasSubstr("bert-eval")));
  EXPECT_THAT(dom, HasSubstr("value=\"ml-research\""));
}

void ExpectTrainingProgress(const std::string& dom) {
  EXPECT_THAT(dom, HasSubstr("PyTorchJob in namespace ml-research"));
  EXPECT_THAT(dom, HasSubstr("llama-pretrain-worker-1"));
  EXPECT_THAT(dom, HasSubstr("8 allocated to running pods"));
  EXPECT_THAT(dom,
              HasSubstr("Loss: 2 runs, 30 points, latest 1.5 at iteration 30"));
  EXPECT_THAT(
      dom,
      HasSubstr(
          "TFLOP/s per GPU: 2 runs, 30 points, latest 210 at iteration 30"));
  EXPECT_THAT(
      dom,
      HasSubstr(
          "Tokens/s per GPU: 2 runs, 30 points, latest 4,300 at iteration 30"));
  EXPECT_THAT(dom, HasSubstr("Step time: 2 runs, 30 points, latest 1.53 s"));
  EXPECT_THAT(dom, HasSubstr("1 restart<"));
  EXPECT_THAT(dom, HasSubstr("Checkpoint saved"));
  EXPECT_THAT(dom, HasSubstr("/ckpt/llama/iter_20"));
  // The GPUs its containers hold, and its pods' lifecycle.
  EXPECT_THAT(dom, HasSubstr("id=\"workload-gpus\""));
  EXPECT_THAT(dom, HasSubstr("SN-ALPHA-1B"));
  // Goodput: the split bar, the runs and MFU.
  EXPECT_THAT(dom, HasSubstr("id=\"goodput-bar\""));
  EXPECT_THAT(dom, HasSubstr("id=\"goodput-runs\""));
  EXPECT_THAT(dom, HasSubstr("id=\"stat-mfu\""));
  EXPECT_THAT(dom, HasSubstr("id=\"stragglers\""));
  EXPECT_THAT(dom, HasSubstr("id=\"lifecycle-table\""));
  EXPECT_THAT(dom, HasSubstr(">Restarted<"));
}

TEST_F(DashboardPagesTest, WorkloadPageShowsTrainingProgress) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  ExpectTrainingProgress(
      Load(std::string("#/workloads/") + kLlamaUid, "workload"));
}

TEST_F(DashboardPagesTest, WorkloadPageReadsIterationsWithoutTheSeriesRoute) {
  LENS_NEEDS_CHROMIUM();
  Serve({.without_training_series = true});
  ExpectTrainingProgress(Load(std::string("#/workloads/") + kLlamaUid));
}

// With utilisation samples the stragglers route answers: its caption and
// table are drawn instead of the note.
TEST_F(DashboardPagesTest, WorkloadPageComparesItsGpusWithSeries) {
  LENS_NEEDS_CHROMIUM();
  Serve({.series = true});
  const std::string dom =
      Load(std::string("#/workloads/") + kLlamaUid, "workload");
  EXPECT_THAT(dom, HasSubstr("id=\"stragglers-caption\""));
  EXPECT_THAT(dom, Not(HasSubstr("Stragglers need utilisation samples")));
}

TEST_F(DashboardPagesTest, UnknownWorkloadSaysNotFound) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  const std::string dom = Load("#/workloads/no-such-uid", "", "error");
  EXPECT_THAT(dom, HasSubstr("Not found"));
  EXPECT_THAT(dom, HasSubstr("no-such-uid"));
}

TEST_F(DashboardPagesTest, FlowsPageSaysWhenFlowsAreUnavailable) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  EXPECT_THAT(Load("#/flows"), HasSubstr("Flow data is not available"));
}

TEST_F(DashboardPagesTest, FlowsPageShowsRatesAndRemotes) {
  LENS_NEEDS_CHROMIUM();
  Serve({.series = true});
  const std::string dom = Load("#/flows", "flows");
  // Mean rates over the range: the step still being written counts as
  // one without data, so a little under 1.25 GB/s, 1.18 GB/s, 0.75/s.
  EXPECT_THAT(dom, testing::ContainsRegex(">1\\.2[2-5] GB/s<"));  // egress
  EXPECT_THAT(dom, testing::ContainsRegex(">1\\.1[5-8] GB/s<"));  // ingress
  EXPECT_THAT(dom, testing::ContainsRegex(">0\\.7[2-5][0-9]*/s<"));
  EXPECT_THAT(dom, HasSubstr("10.0.0.12"));
  EXPECT_THAT(dom, HasSubstr("151.101.1.69"));
  EXPECT_THAT(dom, HasSubstr("ml-research/llama-pretrain"));
  EXPECT_THAT(dom, HasSubstr("not a workload"));
}

}  // namespace
}  // namespace lens::test
