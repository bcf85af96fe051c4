// Opening a database an older Lens wrote (schema version 4) migrates it and
// keeps its rows (iteration fields written as jsonb read back from json), on
// both backends: the rows get a change-feed stamp from their updated_at (never
// later than the migration), and the new tables work.
#include <gtest/gtest.h>

#include "lens/store.h"
#include "store/open.h"
#include "store/schema.h"
#include "store_test_env.h"

namespace lens::test {
namespace {

constexpr int64_t kT0 = 1700000000123456;      // microseconds, not round
constexpr int64_t kFuture = 4102444800000000;  // 2100-01-01

class SchemaUpgradeStore : public testing::TestWithParam<Backend> {};

// Applies migrations 1..4 only, as a Lens of that version did.
Status MigrateToVersion4(store::Database& db) {
  return db.WithConn([](store::Conn& c) -> Status {
    LENS_RETURN_IF_ERROR(c.LockMigrations());
    Status st = c.ExecScript(
        "CREATE TABLE lens_schema_migrations (version INTEGER PRIMARY KEY, "
        "name TEXT NOT NULL, applied_at_us BIGINT NOT NULL)");
    for (const store::Migration& m : store::Migrations(c.dialect())) {
      if (!st.ok() || m.version > 4) break;
      st = c.ExecScript(m.sql);
      const store::Param p[] = {int64_t{m.version}, std::string_view(m.name),
                                kT0};
      if (st.ok()) {
        st = c.Execute(
            "INSERT INTO lens_schema_migrations (version, name, "
            "applied_at_us) VALUES ($1, $2, $3)",
            p);
      }
    }
    Status unlock = c.UnlockMigrations(st.ok());
    return st.ok() ? unlock : st;
  });
}

// Rows as a version-4 writer stored them (its columns only).
Status WriteVersion4Rows(store::Database& db) {
  return db.Write([](store::Conn& c) -> Status {
    for (const char* sql : {
             "INSERT INTO nodes (name, gpu_count, labels, created_at, "
             "updated_at) VALUES ('node-a', 8, '{\"zone\":\"a\"}', "
             "lens_ts($1), lens_ts($1))",
             "INSERT INTO gpu_devices (node, gpu_index, serial, updated_at) "
             "VALUES ('node-a', 0, 'S0', lens_ts($1))",
             "INSERT INTO gpu_pods (uid, name, namespace, node, running, "
             "deleted, labels, created_at, updated_at, restarts) VALUES "
             "('p-old', 'trainer', 'ml', 'node-a', TRUE, FALSE, "
             "'{\"app\":\"llm\"}', lens_ts($1), lens_ts($1), 2)",
             "INSERT INTO gpu_pods (uid, name, namespace, running, deleted, "
             "labels, created_at, updated_at) VALUES ('p-future', 'f', 'ml', "
             "FALSE, FALSE, '{}', lens_ts($1), lens_ts($2))",
             "INSERT INTO gpu_workloads (uid, name, namespace, status, "
             "active_pods, labels, created_at, updated_at) VALUES ('w-1', "
             "'llama', 'ml', 'Running', 1, '{}', lens_ts($1), lens_ts($1))",
             "INSERT INTO node_containers (container_id, node, pod_uid, state, "
             "privileged, labels, created_at, updated_at) VALUES ('c-1', "
             "'node-a', 'p-old', 'running', FALSE, '{}', lens_ts($1), "
             "lens_ts($1))",
             "INSERT INTO node_container_devices (container_id, kind, "
             "device_key) VALUES ('c-1', 'gpu', 'S0')",
             // Written as jsonb; version 6 stores json. A number jsonb
             // printed in its own form (numeric) must still read back.
             "INSERT INTO training_performance (workload_uid, run, iteration, "
             "ts, format, loss, fields) VALUES ('w-1', 1, 7, lens_ts($1), "
             "'megatron', 2.5, '{\"loss\":2.5,\"learning_rate\":2.9e-4,"
             "\"tokens per step\":1e6}')",
         }) {
      const std::string_view text(sql);
      const store::Param params[] = {kT0, kFuture};
      const size_t used = text.find("$2") != std::string_view::npos   ? 2
                          : text.find("$1") != std::string_view::npos ? 1
                                                                      : 0;
      LENS_RETURN_IF_ERROR(
          c.Execute(text, std::span<const store::Param>(params, used)));
    }
    return OkStatus();
  });
}

TEST_P(SchemaUpgradeStore, Version4DatabaseMigratesAndKeepsItsRows) {
  TestDatabase fresh(GetParam());
  ASSERT_FALSE(fresh.url().empty());
  {
    auto db = store::OpenDatabase(fresh.url(), {});
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(MigrateToVersion4(**db).ok());
    Status st = WriteVersion4Rows(**db);
    ASSERT_TRUE(st.ok()) << st;
  }
  const Timestamp before_open =
      std::chrono::time_point_cast<std::chrono::microseconds>(
          std::chrono::system_clock::now());
  auto opened = Store::Open(fresh.url());
  ASSERT_TRUE(opened.ok()) << opened.status();
  Store& store = **opened;
  auto status = store.GetSchemaStatus();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->current_version, status->latest_version);
  EXPECT_GE(status->current_version, 5);

  auto pod = store.pods().GetPod("p-old");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->node, "node-a");
  EXPECT_TRUE(pod->running);
  EXPECT_EQ(pod->restarts, 2);
  EXPECT_EQ(pod->labels.at("app"), "llm");
  EXPECT_EQ(pod->updated_at, At(kT0));
  EXPECT_EQ(store.pods().GetWorkload("w-1")->active_pods, 1);
  auto container = store.containers().GetContainer("c-1");
  ASSERT_TRUE(container.ok()) << container.status();
  ASSERT_EQ(container->devices.size(), 1u);
  EXPECT_EQ(container->devices[0].device_key, "S0");
  EXPECT_EQ(store.nodes().GetGpuDevice("node-a", 0)->serial, "S0");
  EXPECT_EQ(store.nodes().GetNode("node-a")->gpu_count, 8);
  IterationQuery iq;
  iq.workload_uid = "w-1";
  auto iterations = store.training().ListIterations(iq);
  ASSERT_TRUE(iterations.ok()) << iterations.status();
  ASSERT_EQ(iterations->items.size(), 1u);
  const IterationRecord& it = iterations->items[0];
  EXPECT_EQ(it.iteration, 7);
  EXPECT_EQ(it.Get(IterationField::kLoss), 2.5);
  EXPECT_DOUBLE_EQ(*it.Get(IterationField::kLearningRate), 2.9e-4);
  ASSERT_EQ(it.extra.size(), 1u);
  EXPECT_EQ(it.extra[0].first, "tokens per step");
  EXPECT_EQ(it.extra[0].second, 1e6);

  // The old rows are in the feed, stamped with their updated_at, but never
  // later than the migration: a future updated_at must not push readers'
  // watermarks past rows written after it.
  auto pods = store.pods().ListPodsWrittenSince(Timestamp{});
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_EQ(pods->items.size(), 2u);
  EXPECT_EQ(pods->items[0].uid, "p-old");
  EXPECT_EQ(pods->items[1].uid, "p-future");
  EXPECT_EQ(store.pods().ListPodsWrittenSince(At(kT0 + 1))->items.size(), 1u);
  EXPECT_GE(pods->through, before_open - std::chrono::seconds(5));
  EXPECT_LE(pods->through,
            std::chrono::time_point_cast<std::chrono::microseconds>(
                std::chrono::system_clock::now()));
  EXPECT_EQ(store.pods().ListWorkloadsWrittenSince(At(kT0))->items.size(), 1u);
  EXPECT_EQ(store.containers()
                .ListContainersWrittenSince(At(kT0), true)
                ->items.size(),
            1u);
  EXPECT_EQ(store.nodes().ListGpuDevicesWrittenSince(At(kT0))->through,
            At(kT0));

  // A write after the upgrade is stamped later than every old row.
  PodRecord p = *pod;
  p.phase = "Succeeded";
  ASSERT_TRUE(store.pods().UpsertPods(std::span(&p, 1)).ok());
  auto newest = store.pods().ListPodsWrittenSince(pods->through +
                                                  std::chrono::microseconds(1));
  ASSERT_EQ(newest->items.size(), 1u);
  EXPECT_EQ(newest->items[0].phase, "Succeeded");

  // And the sample history exists.
  const MetricSample s{"up", {{"job", "lens"}}, 1700000000000, 1};
  ASSERT_TRUE(store.samples().AppendSamples(std::span(&s, 1)).ok());
  auto got = store.samples().QuerySamples({"up", {}, 0, 1800000000000});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Backends, SchemaUpgradeStore,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
