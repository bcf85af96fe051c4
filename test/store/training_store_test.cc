// Training data in the store: idempotent re-storing, run numbering across
// restarts, streaming, non-finite values. Runs on SQLite and PostgreSQL.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "lens/store.h"
#include "lens/training.h"
#include "store_test_env.h"

namespace lens::test {
namespace {

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(LENS_FIXTURES_DIR) + "/training/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TrainingStore : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    db_ = std::make_unique<TestDatabase>(GetParam());
    auto store = Store::Open(db_->url());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  // Parses `fixture` and stores it for `workload` from `source`.
  TrainingLog Store1(const std::string& workload, const std::string& source,
                     const std::string& fixture) {
    TrainingLog log = ParseTrainingLog(ReadFixture(fixture));
    auto writer = store_->training().OpenWriter(workload, source);
    EXPECT_TRUE(writer.ok()) << writer.status();
    Status st = writer->Write(log.records, log.events);
    EXPECT_TRUE(st.ok()) << st;
    return log;
  }

  int64_t Iterations(const std::string& workload) {
    IterationQuery q;
    q.workload_uid = workload;
    q.page.page_size = 1;
    auto page = store_->training().ListIterations(q);
    EXPECT_TRUE(page.ok()) << page.status();
    return page.ok() ? page->total : -1;
  }

  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Store> store_;
};

TEST_P(TrainingStore, StoringTheSameLogTwiceKeepsOneRowPerIteration) {
  TrainingLog log = Store1("w1", "/logs/rank7.log", "primus_rocm.log");
  ASSERT_EQ(log.records.size(), 90u);
  Store1("w1", "/logs/rank7.log", "primus_rocm.log");
  EXPECT_EQ(Iterations("w1"), 90);
  auto runs = store_->training().ListRuns("w1");
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].run, 1);
  EXPECT_EQ((*runs)[2].run, 3);
  EXPECT_EQ(
      (*runs)[0].iterations + (*runs)[1].iterations + (*runs)[2].iterations,
      90);
  EXPECT_EQ((*runs)[1].first_iteration, 10);
  EXPECT_EQ((*runs)[1].last_iteration, 400);
  auto events = store_->training().ListEvents("w1");
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->size(), log.events.size());
}

TEST_P(TrainingStore, RunNumbersContinueAcrossRestarts) {
  Store1("w1", "pod-a/trainer", "primus_rocm.log");  // runs 1..3
  // The workload restarts: a new pod's log, whose parser starts at run 1.
  TrainingLog b = Store1("w1", "pod-b/trainer", "megatron_lm_core_r0.x.log");
  auto runs = store_->training().ListRuns("w1");
  ASSERT_TRUE(runs.ok());
  int32_t local_runs_b = 0;
  for (const auto& r : b.records) local_runs_b = std::max(local_runs_b, r.run);
  ASSERT_EQ(runs->size(), 3u + local_runs_b);
  EXPECT_EQ(runs->back().run, 3 + local_runs_b);
  EXPECT_EQ(runs->back().source, "pod-b/trainer");
  // Storing the first log again changes nothing.
  Store1("w1", "pod-a/trainer", "primus_rocm.log");
  EXPECT_EQ(store_->training().ListRuns("w1")->size(), 3u + local_runs_b);
  EXPECT_EQ(Iterations("w1"), static_cast<int64_t>(90 + b.records.size()));
  // The latest iteration is the restart's last.
  auto latest = store_->training().LatestIteration("w1");
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->run, 3 + local_runs_b);
  EXPECT_EQ(latest->iteration, b.records.back().iteration);
}

TEST_P(TrainingStore, StreamingInChunksEqualsOneWrite) {
  const std::string text = ReadFixture("primus_rocm.log");
  TrainingLogParser parser;
  auto writer = store_->training().OpenWriter("stream", "rank7");
  ASSERT_TRUE(writer.ok());
  for (size_t at = 0; at < text.size(); at += 700) {
    parser.Feed(std::string_view(text).substr(at, 700));
    auto records = parser.TakeRecords();
    auto events = parser.TakeEvents();
    ASSERT_TRUE(writer->Write(records, events).ok());
  }
  parser.Finish();
  ASSERT_TRUE(writer->Write(parser.TakeRecords(), parser.TakeEvents()).ok());
  Store1("whole", "rank7", "primus_rocm.log");
  EXPECT_EQ(Iterations("stream"), Iterations("whole"));
  IterationQuery q;
  q.workload_uid = "stream";
  q.page.page_size = 1000;
  auto a = store_->training().ListIterations(q);
  q.workload_uid = "whole";
  auto b = store_->training().ListIterations(q);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->items.size(), b->items.size());
  for (size_t i = 0; i < a->items.size(); ++i) {
    EXPECT_EQ(a->items[i].run, b->items[i].run);
    EXPECT_EQ(a->items[i].iteration, b->items[i].iteration);
    EXPECT_EQ(a->items[i].Get(IterationField::kLoss),
              b->items[i].Get(IterationField::kLoss));
  }
}

TEST_P(TrainingStore, FieldsRoundTripIncludingNonFinite) {
  IterationRecord r;
  r.iteration = 7;
  r.line = 3;
  r.format = TrainingFormat::kMegatron;
  r.timestamp_s = 1700000000.123456;
  r.rank = 7;
  r.world_size = 8;
  r.Set(IterationField::kLoss, std::nan(""));
  r.Set(IterationField::kGradNorm, INFINITY);
  r.Set(IterationField::kTflopsPerGpu, 412.5);
  r.Set(IterationField::kLearningRate, 2.9999e-05);
  r.extra.emplace_back("router_z_loss", 0.125);
  auto writer = store_->training().OpenWriter("w", "s");
  ASSERT_TRUE(writer->Write({&r, 1}, {}).ok());
  auto got = store_->training().LatestIteration("w");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(std::isnan(*got->Get(IterationField::kLoss)));
  EXPECT_EQ(*got->Get(IterationField::kGradNorm), INFINITY);
  EXPECT_EQ(*got->Get(IterationField::kTflopsPerGpu), 412.5);
  EXPECT_EQ(*got->Get(IterationField::kLearningRate), 2.9999e-05);
  EXPECT_FALSE(got->Has(IterationField::kElapsedMs));  // absent, not zero
  EXPECT_NEAR(*got->timestamp_s, 1700000000.123456, 1e-6);
  EXPECT_EQ(got->rank, 7);
  EXPECT_EQ(got->format, TrainingFormat::kMegatron);
  ASSERT_EQ(got->extra.size(), 1u);
  EXPECT_EQ(got->extra[0].first, "router_z_loss");
}

TEST_P(TrainingStore, IterationQueriesFilterAndSort) {
  Store1("w1", "a", "primus_rocm.log");
  IterationQuery q;
  q.workload_uid = "w1";
  q.run = 2;
  q.min_iteration = 100;
  q.max_iteration = 200;
  q.sort = {"iteration", true};
  auto page = store_->training().ListIterations(q);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->total, 11);  // 100, 110, ..., 200
  EXPECT_EQ(page->items.front().iteration, 200);
  q.sort.key = "loss";
  EXPECT_EQ(store_->training().ListIterations(q).status().code(),
            StatusCode::kInvalidArgument);
  q = {};
  EXPECT_EQ(store_->training().ListIterations(q).status().code(),
            StatusCode::kInvalidArgument);  // workload required
  EXPECT_EQ(store_->training().LatestIteration("none").status().code(),
            StatusCode::kNotFound);
}

// Validations and memory reports round-trip, idempotently, with their stored
// run numbers.
TEST_P(TrainingStore, ValidationsAndMemoryReportsRoundTripOnce) {
  TrainingLog log = ParseTrainingLog(ReadFixture("megatron_lm_core_r0.x.log"));
  ASSERT_GT(log.validations.size(), 3u);
  ASSERT_GT(log.memory_reports.size(), 3u);
  log.validations[0].extra = {{"reg loss", 7631.5}, {"caf\xc3\xa9 loss", 1}};
  for (int pass = 0; pass < 2; ++pass) {
    auto writer = store_->training().OpenWriter("w9", "/logs/r0.log");
    ASSERT_TRUE(writer.ok()) << writer.status();
    Status st = writer->Write(TrainingBatch{
        log.records, log.events, log.validations, log.memory_reports});
    ASSERT_TRUE(st.ok()) << st;
  }
  auto validations = store_->training().ListValidations("w9");
  ASSERT_TRUE(validations.ok()) << validations.status();
  ASSERT_EQ(validations->size(), log.validations.size());
  for (size_t i = 0; i < log.validations.size(); ++i) {
    const ValidationRecord& a = log.validations[i];
    const ValidationRecord& b = (*validations)[i];
    EXPECT_EQ(b.run, a.run);
    EXPECT_EQ(b.iteration, a.iteration);
    EXPECT_EQ(b.split, a.split);
    EXPECT_EQ(b.end_of_training, a.end_of_training);
    EXPECT_EQ(b.line, a.line);
    EXPECT_EQ(b.loss, a.loss);
    EXPECT_EQ(b.perplexity, a.perplexity);
    EXPECT_EQ(b.extra, a.extra);
  }
  EXPECT_EQ(validations->back().split, EvaluationSplit::kTest);
  auto reports =
      store_->training().ListMemoryReports("w9", PageRequest{1, 1000});
  ASSERT_TRUE(reports.ok()) << reports.status();
  ASSERT_EQ(reports->total, static_cast<int64_t>(log.memory_reports.size()));
  const MemoryReport& first = reports->items.front();
  EXPECT_EQ(first.rank, log.memory_reports[0].rank);
  EXPECT_EQ(first.context, log.memory_reports[0].context);
  EXPECT_EQ(first.iteration, log.memory_reports[0].iteration);
  EXPECT_EQ(first.allocated_mb, log.memory_reports[0].allocated_mb);
  EXPECT_EQ(first.max_reserved_mb, log.memory_reports[0].max_reserved_mb);
}

// Invalid UTF-8 and NUL bytes in what a log prints (a checkpoint path, a
// field name, a validation's extra key, a memory report's context) are stored
// as U+FFFD on both backends alike, and the rest of the log with them.
TEST_P(TrainingStore, BadBytesAreStoredAsReplacementCharacters) {
  using namespace std::string_literals;
  const std::string bad = "\xff\x00\xc3"s;  // invalid, NUL, truncated
  const std::string log_text =
      " iteration        1/      10 | consumed samples: 8 | lm loss: "
      "9.5E+00 | w" +
      bad +
      "x: 1.5 |\n"
      "saving checkpoint at iteration       1 to /ckpt/r" +
      bad +
      "n\n"
      " validation loss at iteration 1 | lm loss value: 9.1E+00 | k" +
      bad +
      ": 2.0 |\n"
      "[Rank 0] (after 1 iterations" +
      bad +
      ") memory (MB) | allocated: 1.0 "
      "| max allocated: 2.0 | reserved: 3.0 | max reserved: 4.0\n"
      " iteration        2/      10 | consumed samples: 16 | lm loss: "
      "9.0E+00 |\n";
  TrainingLog log = ParseTrainingLog(log_text);
  ASSERT_EQ(log.records.size(), 2u);
  ASSERT_EQ(log.events.size(), 1u);
  ASSERT_EQ(log.validations.size(), 1u);
  ASSERT_EQ(log.memory_reports.size(), 1u);
  auto writer = store_->training().OpenWriter("w-bad", "/logs/bad\xff.log");
  ASSERT_TRUE(writer.ok()) << writer.status();
  Status st = writer->Write(TrainingBatch{log.records, log.events,
                                          log.validations, log.memory_reports});
  ASSERT_TRUE(st.ok()) << st;
  const std::string fffd = "\xef\xbf\xbd";
  auto events = store_->training().ListEvents("w-bad");
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(events->front().path, "/ckpt/r" + fffd + fffd + fffd + "n");
  IterationQuery q;
  q.workload_uid = "w-bad";
  auto records = store_->training().ListIterations(q);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->items.size(), 2u);
  ASSERT_EQ(records->items[0].extra.size(), 1u);
  EXPECT_EQ(records->items[0].extra.begin()->first.find('\0'),
            std::string::npos);
  EXPECT_NE(records->items[0].extra.begin()->first.find(fffd),
            std::string::npos);
  auto validations = store_->training().ListValidations("w-bad");
  ASSERT_TRUE(validations.ok()) << validations.status();
  ASSERT_EQ(validations->size(), 1u);
  auto reports =
      store_->training().ListMemoryReports("w-bad", PageRequest{1, 100});
  ASSERT_TRUE(reports.ok()) << reports.status();
  ASSERT_EQ(reports->items.size(), 1u);
  EXPECT_NE(reports->items[0].context.find(fffd), std::string::npos);
  EXPECT_EQ(reports->items[0].context.find('\0'), std::string::npos);
}

// The iterations of `samples`, in order.
std::vector<int64_t> IterationsOf(const std::vector<IterationRecord>& samples) {
  std::vector<int64_t> out;
  for (const IterationRecord& r : samples) out.push_back(r.iteration);
  return out;
}

TEST_P(TrainingStore, SampleIterationsSpreadsRecordsOverEachRun) {
  // w1 run 1: iterations 1..100 (loss = iteration); run 2: 1..5, the third
  // with a NaN loss. w2: every tenth iteration, 10..1000.
  std::vector<IterationRecord> records, sparse;
  for (int run = 1; run <= 2; ++run) {
    for (int i = 1; i <= (run == 1 ? 100 : 5); ++i) {
      IterationRecord r;
      r.run = run;
      r.iteration = i;
      r.line = records.size() + 1;
      r.timestamp_s = 1700000000.0 + 1000 * run + i;
      r.Set(IterationField::kLoss, run == 2 && i == 3 ? NAN : double(i));
      records.push_back(r);
    }
  }
  for (int i = 10; i <= 1000; i += 10) {
    IterationRecord r;
    r.iteration = i;
    r.line = sparse.size() + 1;
    sparse.push_back(r);
  }
  for (const auto& [uid, batch] :
       {std::pair{"w1", &records}, std::pair{"w2", &sparse}}) {
    auto writer = store_->training().OpenWriter(uid, "pod/trainer");
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE(writer->Write(*batch, {}).ok());
  }
  IterationSampleQuery q;
  q.workload_uid = "w1";
  q.max_points = 10;  // run 1: step ceil(99 / 9) = 11
  auto samples = store_->training().SampleIterations(q);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(IterationsOf(*samples),
            (std::vector<int64_t>{1, 12, 23, 34, 45, 56, 67, 78, 89, 100,  //
                                  1, 2, 3, 4, 5}));
  const IterationRecord& r = (*samples)[1];
  EXPECT_EQ(r.run, 1);
  EXPECT_EQ(*r.Get(IterationField::kLoss), 12);
  EXPECT_EQ(*r.timestamp_s, 1700001012.0);
  EXPECT_EQ((*samples)[10].run, 2);
  EXPECT_TRUE(std::isnan(*(*samples)[12].Get(IterationField::kLoss)));

  q.run = 1;
  q.max_points = 2;  // the first and the last
  samples = store_->training().SampleIterations(q);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(IterationsOf(*samples), (std::vector<int64_t>{1, 100}));
  q.run.reset();
  q.workload_uid = "w2";
  q.max_points = 5;  // step ceil(990 / 4) = 248: at or before 258, 506, 754
  samples = store_->training().SampleIterations(q);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(IterationsOf(*samples),
            (std::vector<int64_t>{10, 250, 500, 750, 1000}));
  q.max_points = 200;  // more targets than records: each record once
  samples = store_->training().SampleIterations(q);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->size(), 100u);

  q.workload_uid = "nobody";
  samples = store_->training().SampleIterations(q);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_TRUE(samples->empty());
  q.max_points = 1;
  EXPECT_EQ(store_->training().SampleIterations(q).status().code(),
            StatusCode::kInvalidArgument);
  q.max_points = 10;
  q.workload_uid.clear();
  EXPECT_EQ(store_->training().SampleIterations(q).status().code(),
            StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Backends, TrainingStore,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
