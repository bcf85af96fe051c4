// The forwarder's disk queue (liblens/telemetry/disk_queue.h): appending
// 64 KiB records (a remote-write body of ~2,000 series) with and without an
// fdatasync per append, and the forwarder's round trip per record (append,
// peek, commit: a cursor file renamed into place). The queue lives in
// $TMPDIR (a real disk; tmpfs would flatter the fsync figures). Items are
// records, bytes their payload.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "telemetry/disk_queue.h"

namespace lens::telemetry {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr size_t kRecordBytes = 64 << 10;
// The queue is emptied (outside the timing) every this many bytes, so a
// long run does not fill the disk.
constexpr uint64_t kResetBytes = uint64_t{512} << 20;

std::string Record() {
  std::string s(kRecordBytes, '\0');
  std::mt19937_64 rng(42);  // incompressible, like a snappy body
  for (size_t i = 0; i + 8 <= s.size(); i += 8) {
    const uint64_t v = rng();
    std::memcpy(s.data() + i, &v, 8);
  }
  return s;
}

class Bench {
 public:
  explicit Bench(bool fsync) {
    options_.dir = fs::temp_directory_path().string() + "/lens-queue-bench-" +
                   std::to_string(::getpid());
    options_.max_bytes = kResetBytes * 2;
    options_.fsync = fsync;
    Reset();
  }
  ~Bench() {
    queue_.reset();
    fs::remove_all(options_.dir);
  }
  void Reset() {
    queue_.reset();
    fs::remove_all(options_.dir);
    auto q = DiskQueue::Open(options_);
    if (q.ok()) queue_ = std::move(*q);
  }
  DiskQueue* queue() { return queue_.get(); }

 private:
  DiskQueueOptions options_;
  std::unique_ptr<DiskQueue> queue_;
};

void BM_Append(benchmark::State& state) {
  Bench bench(state.range(0) != 0);
  const std::string record = Record();
  uint64_t bytes = 0;
  for (auto _ : state) {
    if (bytes >= kResetBytes) {
      state.PauseTiming();
      bench.Reset();
      bytes = 0;
      state.ResumeTiming();
    }
    if (!bench.queue() || !bench.queue()->Append(record, 2000).ok()) {
      state.SkipWithError("append failed");
      break;
    }
    bytes += record.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * record.size());
}
BENCHMARK(BM_Append)->ArgName("fsync")->Arg(0)->Arg(1)->UseRealTime();

// Append, then Peek and Commit it: the queue stays short, segments are
// deleted as they are consumed.
void BM_AppendPeekCommit(benchmark::State& state) {
  Bench bench(false);
  const std::string record = Record();
  std::vector<QueueRecord> out;
  for (auto _ : state) {
    DiskQueue* q = bench.queue();
    if (!q || !q->Append(record, 2000).ok() ||
        !q->Peek(kRecordBytes, milliseconds(0), &out).ok() || out.empty() ||
        !q->Commit(out.back().end).ok()) {
      state.SkipWithError("round trip failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * record.size());
}
BENCHMARK(BM_AppendPeekCommit)->UseRealTime();

// Appending while the queue holds 0 or ~400 MiB: the cost per record does
// not depend on the queue's length.
void BM_AppendToLongQueue(benchmark::State& state) {
  Bench bench(false);
  const std::string record = Record();
  for (int64_t i = 0; i < state.range(0); ++i) {
    if (!bench.queue()->Append(record).ok()) state.SkipWithError("fill");
  }
  std::vector<QueueRecord> out;
  for (auto _ : state) {
    DiskQueue* q = bench.queue();
    if (!q->Append(record).ok() ||
        !q->Peek(kRecordBytes, milliseconds(0), &out).ok() || out.empty() ||
        !q->Commit(out.back().end).ok()) {
      state.SkipWithError("round trip failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * record.size());
}
BENCHMARK(BM_AppendToLongQueue)->Arg(0)->Arg(6400)->UseRealTime();

}  // namespace
}  // namespace lens::telemetry

BENCHMARK_MAIN();
