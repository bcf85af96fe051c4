// Shared by the logs-path tests: a throwaway SQLite store, everything it
// holds for one workload as comparable text, the reference a log file gives
// (`lens parse-log --store`: one parser, one TrainingWriter), and
// fluent-bit records made to order.
#ifndef LENS_TEST_TELEMETRY_TRAINING_ROWS_H_
#define LENS_TEST_TELEMETRY_TRAINING_ROWS_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "core/json.h"
#include "lens/store.h"
#include "lens/training.h"

namespace lens::telemetry {

inline Timestamp At(double seconds) {
  return Timestamp(std::chrono::microseconds(std::llround(seconds * 1e6)));
}

// A fluent-bit record (the regex `cri` parser's fields) of pod `pod`.
inline std::string Record(std::string_view pod, std::string_view message,
                          std::string_view date = "1741777201.000000",
                          std::string_view host = "node-a") {
  std::string r = "{\"date\":" + std::string(date) +
                  ",\"stream\":\"stdout\",\"logtag\":\"F\",\"message\":";
  AppendJsonString(message, &r);
  r += ",\"kubernetes\":{\"pod_name\":\"" + std::string(pod) +
       "\",\"namespace_name\":\"ml\",\"pod_id\":\"uid-" + std::string(pod) +
       "\",\"labels\":{\"a\":\"b\"},\"host\":\"" + std::string(host) +
       "\",\"container_name\":\"main\"}}";
  return r;
}

// A current Megatron-LM iteration line (with the Megatron-DeepSpeed tgs
// field).
inline std::string Iteration(int i, double loss) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                " [2025-03-12 10:00:00] iteration %8d/     800 | consumed "
                "samples: %12d | elapsed time per iteration (ms): 8216.9 | "
                "throughput per GPU (TFLOP/s/GPU): 422.1 | tokens per gpu per "
                "second (tgs): 3051.2 | learning rate: 1.290850E-04 | global "
                "batch size:   256 | lm loss: %E | loss scale: 1.0 | grad "
                "norm: 0.300 | number of skipped iterations:   0 | number of "
                "nan iterations:   0 |",
                i, i * 256, loss);
  return buf;
}

inline std::string ReadFixture(const std::string& relative) {
  std::ifstream in(std::string(LENS_FIXTURES_DIR) + "/" + relative,
                   std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A SQLite store in a temp file, removed with the object.
class TempStore {
 public:
  explicit TempStore(const std::string& name) {
    static std::atomic<int> seq{0};
    path_ = ::testing::TempDir() + "logs-" + name + "-" +
            std::to_string(::getpid()) + "-" + std::to_string(seq++) + ".db";
    std::filesystem::remove(path_);
    auto store = Store::Open("sqlite://" + path_);
    EXPECT_TRUE(store.ok()) << store.status();
    if (store.ok()) store_ = std::move(*store);
  }
  ~TempStore() {
    store_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::filesystem::remove(path_ + suffix);
    }
  }
  Store* get() { return store_.get(); }
  Store* operator->() { return store_.get(); }

 private:
  std::string path_;
  std::unique_ptr<Store> store_;
};

// Every training row of `workload` (runs, iterations with all fields,
// events, validations, memory reports) as text, in a stable order.
inline std::string TrainingRows(Store& store, const std::string& workload) {
  std::string out;
  auto runs = store.training().ListRuns(workload);
  EXPECT_TRUE(runs.ok()) << runs.status();
  if (!runs.ok()) return out;
  for (const TrainingRunRecord& r : *runs) {
    out += "run " + std::to_string(r.run) + " " + r.source + " " +
           std::to_string(r.first_iteration.value_or(-1)) + ".." +
           std::to_string(r.last_iteration.value_or(-1)) +
           " n=" + std::to_string(r.iterations) + "\n";
  }
  IterationQuery q;
  q.workload_uid = workload;
  q.page.page_size = 1000;
  for (q.page.page_num = 1;; ++q.page.page_num) {
    auto page = store.training().ListIterations(q);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) break;
    for (const IterationRecord& r : page->items) {
      AppendJson(r, &out);
      out += "\n";
    }
    if (int64_t{q.page.page_num} * q.page.page_size >= page->total) break;
  }
  auto events = store.training().ListEvents(workload);
  EXPECT_TRUE(events.ok()) << events.status();
  if (events.ok()) {
    for (const TrainingEvent& e : *events) {
      AppendJson(e, &out);
      out += "\n";
    }
  }
  auto validations = store.training().ListValidations(workload);
  EXPECT_TRUE(validations.ok()) << validations.status();
  if (validations.ok()) {
    for (const ValidationRecord& v : *validations) {
      AppendJson(v, &out);
      out += "\n";
    }
  }
  auto memory = store.training().ListMemoryReports(workload, {1, 1000});
  EXPECT_TRUE(memory.ok()) << memory.status();
  if (memory.ok()) {
    for (const MemoryReport& m : memory->items) {
      AppendJson(m, &out);
      out += "\n";
    }
  }
  return out;
}

// What `lens parse-log --store --workload <workload> --source <source>`
// stores for `text`: one parser fed in 1 MiB chunks, each batch written.
inline void StoreLikeParseLog(Store& store, const std::string& workload,
                              const std::string& source,
                              std::string_view text) {
  auto writer = store.training().OpenWriter(workload, source);
  ASSERT_TRUE(writer.ok()) << writer.status();
  TrainingLogParser parser;
  auto write = [&] {
    std::vector<IterationRecord> records = parser.TakeRecords();
    std::vector<TrainingEvent> events = parser.TakeEvents();
    std::vector<ValidationRecord> validations = parser.TakeValidations();
    std::vector<MemoryReport> memory = parser.TakeMemoryReports();
    Status st =
        writer->Write(TrainingBatch{records, events, validations, memory});
    ASSERT_TRUE(st.ok()) << st;
  };
  for (size_t at = 0; at < text.size(); at += 1 << 20) {
    parser.Feed(text.substr(at, 1 << 20));
    write();
  }
  parser.Finish();
  write();
}

}  // namespace lens::telemetry

#endif  // LENS_TEST_TELEMETRY_TRAINING_ROWS_H_
