// Concurrent writers (event ingest, periodic jobs, training) and readers on
// one store; built and run under ThreadSanitizer by `make test`.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "lens/store.h"
#include "store_test_env.h"

namespace lens::test {
namespace {

constexpr int64_t kT0 = 1700000000000000;

class StoreConcurrency : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    db_ = std::make_unique<TestDatabase>(GetParam());
    auto store = Store::Open(db_->url());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }
  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreConcurrency, WritersAndReadersLoseAndDuplicateNothing) {
  constexpr int kIngestThreads = 3, kBatches = 20, kPerBatch = 25;
  std::atomic<bool> done{false};
  std::atomic<int> errors{0};
  auto fail = [&](const Status& st) {
    if (!st.ok()) {
      ++errors;
      ADD_FAILURE() << st;
    }
  };
  std::vector<std::thread> threads;
  // Event ingest: each thread its own containers, all touching "shared".
  for (int t = 0; t < kIngestThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        std::vector<ContainerEventRecord> events;
        std::vector<ContainerRecord> containers;
        for (int i = 0; i < kPerBatch; ++i) {
          const std::string id =
              "c" + std::to_string(t) + "-" + std::to_string(b * kPerBatch + i);
          events.push_back(
              {id, "n1", ContainerEventType::kStart, b, "{}", At(kT0 + i)});
          ContainerRecord c;
          c.container_id = i == 0 ? "shared" : id;
          c.node = "n1";
          c.state = ContainerState::kRunning;
          c.updated_at = At(kT0 + b);
          c.devices.push_back(
              {DeviceKind::kGpu, "SER" + std::to_string(i % 8), "", "t"});
          containers.push_back(std::move(c));
        }
        fail(store_->containers().AddContainerEvents(events));
        fail(store_->containers().UpsertContainers(containers));
      }
    });
  }
  // A periodic job: node + device inventory + pods.
  threads.emplace_back([&] {
    NodeRecord n;
    n.name = "n1";
    n.updated_at = At(kT0);
    fail(store_->nodes().UpsertNode(n));
    for (int round = 0; round < 20; ++round) {
      std::vector<GpuDeviceRecord> gpus(8);
      for (int i = 0; i < 8; ++i) {
        gpus[i].gpu_index = i;
        gpus[i].serial = "SER" + std::to_string(i + (round % 2) * 100);
      }
      fail(
          store_->nodes().SyncGpuDevices("n1", gpus, At(kT0 + round)).status());
      PodRecord p;
      p.uid = "pod-" + std::to_string(round);
      p.name = p.uid;
      p.namespace_name = "ns";
      p.updated_at = At(kT0 + round);
      fail(store_->pods().UpsertPods({&p, 1}));
    }
  });
  // Two training writers of one workload, from two sources at once: run
  // numbers must come out distinct.
  for (int s = 0; s < 2; ++s) {
    threads.emplace_back([&, s] {
      auto w = store_->training().OpenWriter("wl", "src" + std::to_string(s));
      fail(w.status());
      if (!w.ok()) return;
      for (int b = 0; b < 10; ++b) {
        std::vector<IterationRecord> records(50);
        for (int i = 0; i < 50; ++i) {
          records[i].run = 1;
          records[i].iteration = b * 50 + i + 1;
          records[i].line = static_cast<uint64_t>(b * 50 + i + 1);
          records[i].Set(IterationField::kLoss, 2.0 + s);
        }
        fail(w->Write(records, {}));
      }
    });
  }
  // Readers.
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        fail(store_->containers().ListContainers({}).status());
        fail(store_->pods().ListPods({}).status());
        fail(store_->nodes().ListGpuDevices("n1").status());
        IterationQuery q;
        q.workload_uid = "wl";
        fail(store_->training().ListIterations(q).status());
      }
    });
  }
  for (auto& t : threads) t.join();
  done = true;
  for (auto& t : readers) t.join();
  ASSERT_EQ(errors.load(), 0);

  auto events = store_->containers().ListContainerEvents("", {}, {1, 1});
  EXPECT_EQ(events->total, kIngestThreads * kBatches * kPerBatch);
  auto containers = store_->containers().ListContainers({});
  EXPECT_EQ(containers->total,
            kIngestThreads * kBatches * (kPerBatch - 1) + 1);  // + "shared"
  auto shared = store_->containers().GetContainer("shared");
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(shared->devices.size(), 1u);
  EXPECT_EQ(store_->nodes().ListGpuDevices("n1")->size(), 8u);
  EXPECT_EQ(store_->pods().ListPods({})->total, 20);
  auto changes = store_->nodes().ListDeviceChanges("n1", {}, {1, 1});
  EXPECT_EQ(changes->total, 8 + 19 * 8);  // 8 creates, then 8 replaces/round
  auto runs = store_->training().ListRuns("wl");
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].run, 1);
  EXPECT_EQ((*runs)[1].run, 2);
  EXPECT_EQ((*runs)[0].iterations, 500);
  EXPECT_EQ((*runs)[1].iterations, 500);
  EXPECT_NE((*runs)[0].source, (*runs)[1].source);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreConcurrency,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
