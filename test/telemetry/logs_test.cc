// The logs path: fluent-bit requests in (test/fixtures/telemetry, shaped as
// fluent-bit's http output writes them), training rows out: the same rows
// `lens parse-log --store` stores for the container's log file, whatever
// the requests' boundaries; plus its limits, skips, eviction and metrics.
#include "telemetry/logs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include "core/json.h"
#include "core/text.h"
#include "postgres_server.h"
#include "training_rows.h"

namespace lens::telemetry {
namespace {

constexpr char kPodUid[] = "7c1e4a9b-3f25-4d8e-9b61-0a4f2c8d5e37";
constexpr char kJobUid[] = "3d1f0c52-7a9e-4b6d-8c21-5e0f9a7b4c13";
constexpr char kSource[] = "training/llama3-8b-pretrain-worker-0/pytorch";

LogOwner ResolveJob(std::string_view pod_uid, std::string_view,
                    std::string_view) {
  if (pod_uid == kPodUid) {
    return {kJobUid, "llama3-8b-pretrain", "PyTorchJob", "training"};
  }
  return {};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

// Records [from, to) as one request body.
std::string Body(const std::vector<std::string>& records, size_t from,
                 size_t to, LogFormat format) {
  std::string b = format == LogFormat::kJson ? "[" : "";
  for (size_t i = from; i < to; ++i) {
    if (i > from) b += format == LogFormat::kJson ? "," : "\n";
    b += records[i];
  }
  b += format == LogFormat::kJson ? "]" : "\n";
  return b;
}

std::string Metrics(const LogIngest& logs) {
  std::string out;
  logs.RenderMetrics(&out);
  return out;
}

// Feeds the fixture's records to `store` in requests of 1..20 records, and
// compares the rows with what parse-log stores in `reference` for the
// container's log file.
void ExpectParseLogRows(Store* reference, Store* store, LogFormat format) {
  const std::vector<std::string> records =
      Lines(ReadFixture("telemetry/fluentbit_megatron.jsonl"));
  ASSERT_GT(records.size(), 300u);
  StoreLikeParseLog(*reference, kJobUid, kSource,
                    ReadFixture("telemetry/fluentbit_megatron.cri.log"));

  LogIngestOptions options;
  options.batch_rows = 7;  // many small writes
  LogIngest logs(options, store, ResolveJob);
  // Requests of 1..20 records, cut after every other partial (P) record too,
  // so a line's pieces arrive in different requests.
  std::mt19937 rng(20250312);
  size_t from = 0, requests = 0, cut_partials = 0, partials = 0;
  const double t0 = 1741774200;
  for (size_t i = 0; i < records.size(); ++i) {
    const bool partial =
        records[i].find("\"logtag\":\"P\"") != std::string::npos;
    bool cut = i + 1 == records.size() ||
               std::uniform_int_distribution<int>(0, 19)(rng) == 0;
    if (partial && ++partials % 2 == 1) {
      cut = true;
      ++cut_partials;
    }
    if (!cut) continue;
    Status st =
        logs.Ingest(Body(records, from, i + 1, format), format, At(t0 + i));
    ASSERT_TRUE(st.ok()) << st;
    from = i + 1;
    if (++requests % 3 == 0) {
      ASSERT_TRUE(logs.Flush(At(t0 + i)).ok());
    }
  }
  ASSERT_TRUE(logs.Stop().ok());
  EXPECT_GT(requests, 30u);
  EXPECT_GT(cut_partials, 10u);

  const std::string want = TrainingRows(*reference, kJobUid);
  EXPECT_NE(want.find("\"type\":\"checkpoint_save_end\""), std::string::npos);
  EXPECT_NE(want.find("run 2 " + std::string(kSource)), std::string::npos);
  EXPECT_EQ(TrainingRows(*store, kJobUid), want);
  // The other pods: a data-prep pod (its own workload, no training rows)
  // and the processor itself (skipped).
  EXPECT_EQ(TrainingRows(*store, "0b6d2f81-57c4-4e2a-8d3b-91c7e4a6f052"), "");
  const size_t self = static_cast<size_t>(
      std::count_if(records.begin(), records.end(), [](const std::string& r) {
        return r.find("\"pod_name\":\"lens-telemetry-") != std::string::npos;
      }));
  EXPECT_GT(self, 5u);
  EXPECT_EQ(logs.metrics().skipped(LogSkip::kSelf), self);
  EXPECT_EQ(logs.metrics().records(), records.size());
  EXPECT_EQ(logs.metrics().lines(),
            records.size() - logs.metrics().skipped(LogSkip::kSelf));
  EXPECT_EQ(logs.metrics().errors(LogError::kStore), 0u);

  // The gauges hold the log's last iteration.
  TrainingLog parsed =
      ParseTrainingLog(ReadFixture("telemetry/fluentbit_megatron.cri.log"));
  const IterationRecord& last = parsed.records.back();
  std::string value;
  AppendMetricValue(*last.Get(IterationField::kLoss), &value);
  const std::string labels =
      "{workload_uid=\"" + std::string(kJobUid) +
      "\",workload_name=\"llama3-8b-pretrain\",workload_kind=\"PyTorchJob\","
      "namespace=\"training\"}";
  const std::string text = Metrics(logs);
  EXPECT_NE(text.find("lens_training_iteration" + labels + " " +
                      std::to_string(last.iteration) + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("lens_training_loss" + labels + " " + value + "\n"),
            std::string::npos);
}

class LogsFixtureTest : public ::testing::TestWithParam<LogFormat> {};

TEST_P(LogsFixtureTest, StoresWhatParseLogStoresForTheContainerLog) {
  TempStore reference("reference"), store("ingest");
  ExpectParseLogRows(reference.get(), store.get(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Formats, LogsFixtureTest,
                         ::testing::Values(LogFormat::kJson,
                                           LogFormat::kJsonLines),
                         [](const auto& info) {
                           return info.param == LogFormat::kJson ? "Json"
                                                                 : "JsonLines";
                         });

// The same against PostgreSQL (ctest: telemetry_logs_test.postgres).
TEST(LogsPostgresTest, StoresWhatParseLogStoresForTheContainerLog) {
  test::PostgresServer& pg = test::PostgresServer::Shared();
  auto reference_url = pg.CreateDatabase("logs_reference");
  auto url = pg.CreateDatabase("logs_ingest");
  ASSERT_TRUE(reference_url.ok() && url.ok());
  auto reference = Store::Open(*reference_url);
  auto store = Store::Open(*url);
  ASSERT_TRUE(reference.ok()) << reference.status();
  ASSERT_TRUE(store.ok()) << store.status();
  ExpectParseLogRows(reference->get(), store->get(), LogFormat::kJsonLines);
}

TEST(LogIngestTest, ReadsEveryRecordShapeFluentBitSends) {
  TempStore store("shapes");
  LogIngest logs({}, store.get(), nullptr);
  ASSERT_TRUE(logs.Ingest(ReadFixture("telemetry/fluentbit_shapes.json"),
                          LogFormat::kAuto, At(1741777300))
                  .ok());
  ASSERT_TRUE(logs.Stop().ok());
  // Each shape's pod is its own workload; the line time is the runtime's
  // (`time`, the raw CRI line's) or else the date.
  const double base = 1741777200;
  const double times[][2] = {{base + 1.123456, base + 2.123456},
                             {base + 1.234567, base + 2.234567},
                             {base + 1.345678, base + 2.345678},
                             {base + 1.456789, base + 2.456789},
                             {base + 1.567891, base + 1.567891}};
  for (int shape = 1; shape <= 5; ++shape) {
    SCOPED_TRACE("shape " + std::to_string(shape));
    IterationQuery q;
    q.workload_uid =
        "00000000-0000-4000-8000-00000000000" + std::to_string(shape);
    auto page = store->training().ListIterations(q);
    ASSERT_TRUE(page.ok()) << page.status();
    ASSERT_EQ(page->items.size(), 2u);
    for (int k = 0; k < 2; ++k) {
      const IterationRecord& r = page->items[k];
      EXPECT_EQ(r.iteration, 10 * (k + 1));
      EXPECT_EQ(r.run, 1);
      ASSERT_TRUE(r.timestamp_s);
      EXPECT_EQ(std::llround(*r.timestamp_s * 1e6),
                std::llround(times[shape - 1][k] * 1e6));
      EXPECT_TRUE(r.Has(IterationField::kLoss));
    }
  }
  EXPECT_EQ(logs.metrics().skipped(LogSkip::kNoKubernetes), 1u);
  EXPECT_EQ(logs.metrics().skipped(LogSkip::kNoMessage), 1u);
  EXPECT_EQ(logs.metrics().skipped(LogSkip::kSelf), 1u);
}

TEST(LogIngestTest, MalformedRequestIsAnErrorWithItsOffsetAndStoresNothing) {
  TempStore store("malformed");
  LogIngest logs({}, store.get(), nullptr);
  const std::string good = Record("p", Iteration(10, 3.1));
  const std::string body = "[" + good + ",{\"log\": tru}]";
  Status st = logs.Ingest(body, LogFormat::kJson, At(1741777300));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  // The byte where "tru}" stopped being "true".
  EXPECT_NE(st.message().find("malformed JSON at byte " +
                              std::to_string(good.size() + 13)),
            std::string::npos)
      << st;
  ASSERT_TRUE(logs.Stop().ok());
  EXPECT_EQ(TrainingRows(*store.get(), "uid-p"), "");
  EXPECT_EQ(logs.metrics().records(), 0u);
  EXPECT_EQ(logs.metrics().errors(LogError::kMalformed), 1u);
  EXPECT_NE(Metrics(logs).find("lens_telemetry_log_streams 0\n"),
            std::string::npos);
}

TEST(LogIngestTest, StoresTheDateToTheMicrosecond) {
  TempStore store("date");
  LogIngest logs({}, store.get(), nullptr);
  const std::string body =
      Record("p", Iteration(10, 3.1), "1700000000.000003") + "\n" +
      Record("p", Iteration(20, 3.0), "1700000000.000007");
  ASSERT_TRUE(logs.Ingest(body, LogFormat::kJsonLines, At(1700000001)).ok());
  ASSERT_TRUE(logs.Stop().ok());
  IterationQuery q;
  q.workload_uid = "uid-p";
  auto page = store->training().ListIterations(q);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(std::llround(*page->items[0].timestamp_s * 1e6), 1700000000000003);
  EXPECT_EQ(std::llround(*page->items[1].timestamp_s * 1e6), 1700000000000007);
}

TEST(LogIngestTest, CountsTruncationAndRefusesOversizedRequests) {
  std::string long_text;
  for (int i = 0; i < 3000; ++i) long_text += "\xc3\xa9";  // é, 2 bytes
  LogIngestOptions options;
  options.limits.max_message_bytes = 4095;
  options.limits.max_body_bytes = 1 << 20;
  LogIngest logs(options, nullptr, nullptr);
  EXPECT_TRUE(
      logs.Ingest(Record("p", long_text), LogFormat::kJsonLines, At(1)).ok());
  EXPECT_EQ(logs.metrics().errors(LogError::kTruncated), 1u);
  EXPECT_EQ(
      logs.Ingest(std::string(2 << 20, ' '), LogFormat::kJson, At(1)).code(),
      StatusCode::kResourceExhausted);
  EXPECT_EQ(logs.metrics().errors(LogError::kTooLarge), 1u);
}

// Mutated bodies that still decode reach the parsers with odd text (NULs,
// broken CRI prefixes, lone partials): accepted, never a crash.
TEST(LogIngestTest, SurvivesMutatedRecords) {
  const std::string body = ReadFixture("telemetry/fluentbit_shapes.json");
  LogIngest logs({}, nullptr, nullptr);
  std::mt19937 rng(5);
  const char kBytes[] = {'P', 'F', ' ', 'T', '\\', '0', 'Z', '.', 'n'};
  for (int i = 0; i < 3000; ++i) {
    std::string b = body;
    for (int k = 0; k < 3; ++k) b[rng() % b.size()] = kBytes[rng() % 9];
    Status st = logs.Ingest(b, LogFormat::kJson, At(1741777300 + i));
    EXPECT_TRUE(st.ok() || st.code() == StatusCode::kInvalidArgument) << st;
  }
  EXPECT_TRUE(logs.Flush(At(1741780400)).ok());
  EXPECT_GT(logs.metrics().lines(), 1000u);
}

TEST(LogIngestTest, EvictedStreamIsWrittenBeforeItGoes) {
  TempStore store("evict");
  LogIngestOptions options;
  options.max_streams = 2;
  LogIngest logs(options, store.get(), nullptr);
  // Each pod's last iteration stays open in its parser until the next
  // iteration line, a Flush or the stream's end.
  for (const char* pod : {"a", "b", "c"}) {
    const std::string body = Record(pod, Iteration(10, 3.1)) + "\n" +
                             Record(pod, Iteration(20, 3.0));
    ASSERT_TRUE(logs.Ingest(body, LogFormat::kJsonLines, At(1741777300)).ok());
  }
  IterationQuery q;
  q.workload_uid = "uid-a";
  auto a = store->training().ListIterations(q);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->items.size(), 2u);  // finished and written when evicted
  q.workload_uid = "uid-c";
  auto c = store->training().ListIterations(q);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->items.size(), 0u);  // nothing written yet
  EXPECT_NE(Metrics(logs).find("lens_telemetry_log_streams 2\n"),
            std::string::npos);
  ASSERT_TRUE(logs.Flush(At(1741777301)).ok());
  c = store->training().ListIterations(q);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->items.size(), 2u);  // the open record completed by Flush
  // An idle stream is finished and dropped.
  ASSERT_TRUE(logs.Flush(At(1741777300 + 1801)).ok());
  EXPECT_NE(Metrics(logs).find("lens_telemetry_log_streams 0\n"),
            std::string::npos);
}

TEST(LogIngestTest, GaugesHoldTheLatestValuesUntilTheWorkloadEnds) {
  LogIngestOptions options;
  options.gauge_ttl = std::chrono::seconds(600);
  LogIngest logs(options, nullptr,
                 [](std::string_view, std::string_view, std::string_view pod) {
                   return pod == "p"
                              ? LogOwner{"job-1", "llama", "PyTorchJob", "ml"}
                              : LogOwner{"job-2", "qwen", "JobSet", "ml"};
                 });
  const std::string body = Record("p", Iteration(10, 3.25)) + "\n" +
                           Record("p", Iteration(20, 3.125)) + "\n" +
                           Record("p", Iteration(30, 2.5));
  ASSERT_TRUE(logs.Ingest(body, LogFormat::kJsonLines, At(1741777300)).ok());
  ASSERT_TRUE(logs.Flush(At(1741777300)).ok());
  const std::string labels =
      "{workload_uid=\"job-1\",workload_name=\"llama\",workload_kind="
      "\"PyTorchJob\",namespace=\"ml\"}";
  std::string step;
  AppendMetricValue(8216.9 / 1000, &step);
  std::string text = Metrics(logs);
  for (const std::string& want :
       {"lens_training_iteration" + labels + " 30\n",
        "lens_training_loss" + labels + " 2.5\n",
        "lens_training_tflops_per_gpu" + labels + " 422.1\n",
        "lens_training_tokens_per_second_per_gpu" + labels + " 3051.2\n",
        "lens_training_step_seconds" + labels + " " + step + "\n"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << text;
  }
  logs.ForgetWorkload("job-1");
  EXPECT_EQ(Metrics(logs).find("lens_training_"), std::string::npos);
  // Late lines of the ended workload bring no series back.
  ASSERT_TRUE(logs.Ingest(Record("p", Iteration(40, 2.0)) + "\n" +
                              Record("p", Iteration(50, 2.0)),
                          LogFormat::kJsonLines, At(1741777310))
                  .ok());
  ASSERT_TRUE(logs.Flush(At(1741777310)).ok());
  EXPECT_EQ(Metrics(logs).find("lens_training_"), std::string::npos);
  // A workload silent for gauge_ttl: its series end too.
  ASSERT_TRUE(logs.Ingest(Record("q", Iteration(40, 2.0)) + "\n" +
                              Record("q", Iteration(50, 2.0)),
                          LogFormat::kJsonLines, At(1741777400))
                  .ok());
  EXPECT_NE(
      Metrics(logs).find("lens_training_iteration{workload_uid=\"job-2\""),
      std::string::npos);
  ASSERT_TRUE(logs.Flush(At(1741777400 + 599)).ok());
  EXPECT_NE(
      Metrics(logs).find("lens_training_iteration{workload_uid=\"job-2\""),
      std::string::npos);
  ASSERT_TRUE(logs.Flush(At(1741777400 + 601)).ok());
  EXPECT_EQ(Metrics(logs).find("lens_training_"), std::string::npos);
}

// A flood of distinct pods cannot grow /metrics without bound: the
// workloads with lens_training_* series are capped with the streams (the
// least recently seen ends first), and a pod name that is not UTF-8 does not
// make the scrape unparseable.
TEST(LogIngestTest, TrainingSeriesAreCappedWithTheStreams) {
  LogIngestOptions options;
  options.max_streams = 8;
  LogIngest logs(options, nullptr,
                 [](std::string_view, std::string_view, std::string_view pod) {
                   const std::string p(pod);
                   return LogOwner{"uid-" + p, p, "PyTorchJob", "ml"};
                 });
  for (int i = 0; i < 200; ++i) {
    const std::string pod =
        (i == 199 ? std::string("bad-\xff-") : std::string("pod-")) +
        std::to_string(i);
    const std::string body = Record(pod, Iteration(10, 3.1)) + "\n" +
                             Record(pod, Iteration(20, 3.0));
    ASSERT_TRUE(
        logs.Ingest(body, LogFormat::kJsonLines, At(1741777300 + i)).ok());
  }
  ASSERT_TRUE(logs.Flush(At(1741777500)).ok());
  const std::string text = Metrics(logs);
  size_t series = 0;
  for (size_t at = 0;
       (at = text.find("\nlens_training_iteration{", at)) != std::string::npos;
       ++at) {
    ++series;
  }
  EXPECT_EQ(series, 8u) << text;
  // The newest are kept.
  EXPECT_NE(text.find("workload_uid=\"uid-pod-198\""), std::string::npos);
  EXPECT_EQ(text.find("workload_uid=\"uid-pod-0\""), std::string::npos);
  EXPECT_EQ(FirstInvalidUtf8(text), std::string_view::npos);
  EXPECT_NE(text.find("bad-\xef\xbf\xbd-199"), std::string::npos);
}

TEST(LogIngestTest, CountsLatencyPerNode) {
  LogIngest logs({}, nullptr, nullptr);
  const std::string body =
      Record("p", "a", "1741777207.500000", "node-a") + "\n" +
      Record("p", "b", "1741777207.500000", "node-a") + "\n" +
      Record("q", "c", "1741777209.950000", "node-b");
  ASSERT_TRUE(logs.Ingest(body, LogFormat::kJsonLines, At(1741777210)).ok());
  const std::string text = Metrics(logs);
  for (const char* want : {
           "lens_telemetry_log_latency_seconds_bucket{node=\"node-a\",le="
           "\"1\"} 0\n",
           "lens_telemetry_log_latency_seconds_bucket{node=\"node-a\",le="
           "\"2.5\"} 2\n",
           "lens_telemetry_log_latency_seconds_count{node=\"node-a\"} 2\n",
           "lens_telemetry_log_latency_seconds_sum{node=\"node-a\"} 5\n",
           "lens_telemetry_log_latency_seconds_bucket{node=\"node-b\",le="
           "\"0.1\"} 1\n",
           "lens_telemetry_log_records_total 3\n",
           "lens_telemetry_log_lines_total 3\n",
       }) {
    EXPECT_NE(text.find(want), std::string::npos) << want << text;
  }
}

TEST(LogIngestTest, RecordsWithoutKubernetesGoToTheConfiguredStream) {
  TempStore store("unattributed");
  LogIngestOptions options;
  options.unattributed = LogStreamId{
      "unattributed", "fluent-bit/unattributed", {"node-logs", "", "", ""}};
  LogIngest logs(options, store.get(), nullptr);
  const std::string body = "[{\"date\":1741777201.5,\"log\":" +
                           [] {
                             std::string s;
                             AppendJsonString(Iteration(10, 3.0) + "\n", &s);
                             return s;
                           }() +
                           "},{\"date\":1741777202.5,\"log\":" +
                           [] {
                             std::string s;
                             AppendJsonString(Iteration(20, 2.9) + "\n", &s);
                             return s;
                           }() +
                           "}]";
  ASSERT_TRUE(logs.Ingest(body, LogFormat::kJson, At(1741777203)).ok());
  ASSERT_TRUE(logs.Stop().ok());
  IterationQuery q;
  q.workload_uid = "node-logs";
  auto page = store->training().ListIterations(q);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->items.size(), 2u);
  EXPECT_EQ(logs.metrics().skipped(LogSkip::kNoKubernetes), 0u);
  EXPECT_EQ(logs.Ingest(body, LogFormat::kJson, At(1)).code(),
            StatusCode::kFailedPrecondition);
}

TEST(LogIngestTest, ConcurrentRequestsKeepEachContainersOrder) {
  TempStore store("concurrent");
  LogIngestOptions options;
  options.batch_rows = 5;
  LogIngest logs(options, store.get(), nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const std::string pod = "pod-" + std::to_string(t);
      for (int i = 1; i <= 40; ++i) {
        Status st = logs.Ingest(Record(pod, Iteration(i * 10, 3.0 - i / 100.)),
                                LogFormat::kJsonLines, At(1741777300 + i));
        EXPECT_TRUE(st.ok()) << st;
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 20; ++i) {
      EXPECT_TRUE(logs.Flush(At(1741777300 + i)).ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(logs.Stop().ok());
  for (int t = 0; t < 4; ++t) {
    IterationQuery q;
    q.workload_uid = "uid-pod-" + std::to_string(t);
    auto page = store->training().ListIterations(q);
    ASSERT_TRUE(page.ok()) << page.status();
    ASSERT_EQ(page->items.size(), 40u);
    for (int i = 0; i < 40; ++i) {
      EXPECT_EQ(page->items[i].iteration, (i + 1) * 10);
      EXPECT_EQ(page->items[i].run, 1);
      EXPECT_EQ(page->items[i].line, static_cast<uint64_t>(i + 1));
    }
  }
}

}  // namespace
}  // namespace lens::telemetry
