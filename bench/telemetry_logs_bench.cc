// The telemetry processor's logs path (bytes/s of fluent-bit JSON, one
// core). Requests are shaped as fluent-bit's http output sends a training
// job's container logs: 1 MiB bodies of records from 8 pods of a job (the
// `cri` parser's fields, the date key, the kubernetes filter's map with
// labels and annotations, or without them: lean:1), one line in 20 a
// Megatron iteration line, the rest framework noise. Every figure is per
// byte of request body. Budget: >= 200 MB/s decode + parse.
//   BM_Decode          decoding alone (RapidJSON SAX, in place), format 0
//                      json, 1 json_lines
//   BM_CriLines        the records as the CRI lines fed to the parsers
//                      (decoding excluded)
//   BM_ParseCriLines   the training parser alone on those lines
//   BM_Ingest          LogIngest::Ingest without a store: decode, group by
//                      container, parse (the budget)
//   BM_IngestSqlite              the same with every row written to a SQLite
//                                store (rows/s; the store's share)
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/json.h"
#include "telemetry/logs.h"

namespace lens::telemetry {
namespace {

const char* const kNoise[] = {
    "[2025-02-11 09:12:44,123] [INFO] [data_loader.py:311] > building indices "
    "for blended datasets ... done (2.13 s)",
    "NCCL INFO Channel 03/0 : 5[5] -> 6[6] via P2P/IPC/read",
    "    forward-backward ...............................: (2015.17, 2016.02)",
    "[W reducer.cpp:1300] Warning: find_unused_parameters=True was specified "
    "in DDP constructor, but did not find any unused parameters in the "
    "forward pass.",
    "[2025-02-11 09:12:44] [rank 3] torch.distributed: Using backend nccl with "
    "timeout 0:10:00",
    "    optimizer ......................................: (12.03, 12.11)",
    "Number of parameters in transformer layers in billions:  6.74",
    "[INFO] Profiler: flops counted for this interval, utilization summary "
    "written to /workspace/profile/rank3.json",
};

std::string MegatronLine(int it, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  char buf[800];
  std::snprintf(
      buf, sizeof buf,
      " [2025-10-01 12:%02d:%02d] iteration %8d/  500000 | consumed samples: "
      "%12d | elapsed time per iteration (ms): %.1f | throughput per GPU "
      "(TFLOP/s/GPU): %.1f | learning rate: %.6E | global batch size:   512 "
      "| lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of "
      "skipped iterations:   0 | number of nan iterations:   0 |",
      it / 60 % 60, it % 60, it, it * 512, 1900 + 300 * u(rng),
      380 + 40 * u(rng), 3e-4 * u(rng), 1.5 + 7 * u(rng), 2 * u(rng));
  return buf;
}

// One fluent-bit record of pod `pod` of the job; `lean`: the kubernetes
// filter with `Labels Off` and `Annotations Off`.
std::string Record(int pod, double date, std::string_view message, bool lean) {
  char head[64];
  std::snprintf(head, sizeof head, "{\"date\":%.6f,", date);
  std::string r = head;
  r += "\"stream\":\"stdout\",\"logtag\":\"F\",\"message\":";
  AppendJsonString(message, &r);
  const std::string n = std::to_string(pod);
  r += ",\"kubernetes\":{\"pod_name\":\"llama3-70b-pretrain-worker-" + n +
       "\",\"namespace_name\":\"training\",\"pod_id\":\"4e8c1f2a-9b3d-4c7e-"
       "a1f0-6d2b8e9c3a7" +
       n + "\",";
  if (!lean) {
    r += "\"labels\":{\"app\":\"pytorchjob\",\"training.kubeflow.org/"
         "job-name\":\"llama3-70b-pretrain\",\"training.kubeflow.org/"
         "replica-index\":\"" +
         n +
         "\",\"training.kubeflow.org/replica-type\":\"worker\"},"
         "\"annotations\":{\"kubectl.kubernetes.io/default-container\":"
         "\"pytorch\"},";
  }
  r += "\"host\":\"gpu-node-a1" + n +
       "\",\"container_name\":\"pytorch\",\"docker_id\":"
       "\"b71d6e0f3c5a9284e17f0c2b6d9a3e5f81c4b7d2a09e6f3c1b8d5a7e2f4c6b9" +
       n +
       "\",\"container_hash\":\"nvcr.io/nvidia/nemo@sha256:"
       "3f9e2b7c1d5a8e4f6b0c9d2a7e1f3b5c8d4a6e0f2b9c7d1e5a3f8b6c4d2e0a19\","
       "\"container_image\":\"nvcr.io/nvidia/nemo:25.02\"}}";
  return r;
}

// Eight requests of about 1 MiB; `lean` as for Record. *message_bytes:
// the log text in them.
std::vector<std::string> Requests(LogFormat format, bool lean,
                                  uint64_t* message_bytes) {
  std::mt19937 rng(42);
  std::vector<std::string> out;
  int iteration = 0;
  double date = 1759320000;
  for (int q = 0; q < 8; ++q) {
    std::string body = format == LogFormat::kJson ? "[" : "";
    bool first = true;
    while (body.size() < (1u << 20)) {
      const int pod = static_cast<int>(rng() % 8);
      const std::string message =
          rng() % 20 == 0 ? MegatronLine(++iteration, rng)
                          : std::string(kNoise[rng() % std::size(kNoise)]);
      *message_bytes += message.size();
      if (!first) body += format == LogFormat::kJson ? "," : "\n";
      first = false;
      date += 0.0013;
      body += Record(pod, date, message, lean);
    }
    body += format == LogFormat::kJson ? "]" : "\n";
    out.push_back(std::move(body));
  }
  return out;
}

Timestamp Now() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

size_t Bytes(const std::vector<std::string>& requests) {
  size_t n = 0;
  for (const std::string& r : requests) n += r.size();
  return n;
}

void BM_Decode(benchmark::State& state) {
  const LogFormat format = static_cast<LogFormat>(state.range(0));
  uint64_t message_bytes = 0;
  const std::vector<std::string> requests =
      Requests(format, state.range(1) != 0, &message_bytes);
  DecodedLogs out;
  size_t records = 0;
  for (auto _ : state) {
    for (const std::string& body : requests) {
      Status st = DecodeFluentBitLogs(body, format, {}, &out);
      if (!st.ok()) state.SkipWithError(st.message().c_str());
      records += out.records.size();
    }
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * Bytes(requests)));
  state.SetItemsProcessed(static_cast<int64_t>(records));
  state.counters["log_text_share"] =
      static_cast<double>(message_bytes) / static_cast<double>(Bytes(requests));
}
BENCHMARK(BM_Decode)
    ->ArgsProduct({{static_cast<int>(LogFormat::kJson),
                    static_cast<int>(LogFormat::kJsonLines)},
                   {0, 1}})
    ->ArgNames({"format", "lean"});

// Decoded once; measures building the CRI lines of every record.
void BM_CriLines(benchmark::State& state) {
  uint64_t message_bytes = 0;
  const std::vector<std::string> requests =
      Requests(LogFormat::kJson, state.range(0) != 0, &message_bytes);
  std::vector<DecodedLogs> decoded(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    (void)DecodeFluentBitLogs(requests[i], LogFormat::kJson, {}, &decoded[i]);
  }
  std::string lines;
  for (auto _ : state) {
    for (const DecodedLogs& d : decoded) {
      lines.clear();
      for (const LogRecord& r : d.records) AppendCriLine(r, 0, &lines);
      benchmark::DoNotOptimize(lines.data());
    }
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * Bytes(requests)));
}
BENCHMARK(BM_CriLines)->ArgName("lean")->Arg(0)->Arg(1);

// The CRI lines of every container, parsed by one parser per container.
void BM_ParseCriLines(benchmark::State& state) {
  uint64_t message_bytes = 0;
  const std::vector<std::string> requests =
      Requests(LogFormat::kJson, state.range(0) != 0, &message_bytes);
  std::vector<std::string> per_pod(8);
  for (const std::string& body : requests) {
    DecodedLogs d;
    (void)DecodeFluentBitLogs(body, LogFormat::kJson, {}, &d);
    for (const LogRecord& r : d.records) {
      AppendCriLine(r, 0, &per_pod[r.pod_name.back() - '0']);
    }
  }
  size_t records = 0;
  for (auto _ : state) {
    for (const std::string& text : per_pod) {
      TrainingLogParser parser;
      parser.Feed(text);
      parser.Finish();
      records += parser.TakeRecords().size();
    }
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * Bytes(requests)));
  state.SetItemsProcessed(static_cast<int64_t>(records));
}
BENCHMARK(BM_ParseCriLines)->ArgName("lean")->Arg(0)->Arg(1);

void BM_Ingest(benchmark::State& state) {
  const LogFormat format = static_cast<LogFormat>(state.range(0));
  uint64_t message_bytes = 0;
  const std::vector<std::string> requests =
      Requests(format, state.range(1) != 0, &message_bytes);
  LogIngest logs({}, nullptr, nullptr);
  for (auto _ : state) {
    for (const std::string& body : requests) {
      Status st = logs.Ingest(body, format, Now());
      if (!st.ok()) state.SkipWithError(st.message().c_str());
    }
    (void)logs.Flush(Now());
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * Bytes(requests)));
  state.SetItemsProcessed(static_cast<int64_t>(logs.metrics().records()));
}
BENCHMARK(BM_Ingest)
    ->ArgsProduct({{static_cast<int>(LogFormat::kJson),
                    static_cast<int>(LogFormat::kJsonLines)},
                   {0, 1}})
    ->ArgNames({"format", "lean"});

// With the rows written to SQLite (a temp file; WAL); items are rows.
void BM_IngestSqlite(benchmark::State& state) {
  uint64_t message_bytes = 0;
  const std::vector<std::string> requests =
      Requests(LogFormat::kJson, false, &message_bytes);
  const std::string path =
      "/tmp/lens-logs-bench-" + std::to_string(::getpid()) + ".db";
  std::filesystem::remove(path);
  auto store = Store::Open("sqlite://" + path);
  if (!store.ok()) {
    state.SkipWithError(store.status().message().c_str());
    return;
  }
  {
    LogIngest logs({}, store->get(), nullptr);
    for (auto _ : state) {
      for (const std::string& body : requests) {
        Status st = logs.Ingest(body, LogFormat::kJson, Now());
        if (!st.ok()) state.SkipWithError(st.message().c_str());
      }
      (void)logs.Flush(Now());
    }
    (void)logs.Stop();
    state.SetItemsProcessed(
        static_cast<int64_t>(logs.metrics().stored(LogStored::kIteration)));
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * Bytes(requests)));
  store->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::remove(path + suffix);
  }
}
BENCHMARK(BM_IngestSqlite)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lens::telemetry

BENCHMARK_MAIN();
