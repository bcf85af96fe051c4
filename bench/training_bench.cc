// Training-log parser throughput (bytes/s):
//   BM_MixedLog          realistic log, about 1 line in 20 an iteration line
//   (budget >= 1 GB/s) BM_IterationLines    iteration lines only, Megatron and
//   Primus shapes (budget >= 250 MB/s) BM_TorchTitanAnsi    TorchTitan lines
//   with ANSI colour codes and rank prefixes BM_CriWrapped        Megatron
//   lines inside CRI records
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "lens/training.h"

namespace {

// Noise lines as frameworks print them between iteration lines (data loading,
// NCCL, timers, warnings), 60-200 bytes.
const char* const kNoise[] = {
    "[2025-02-11 09:12:44,123] [INFO] [data_loader.py:311] > building indices "
    "for blended "
    "datasets ... done (2.13 s)",
    "NCCL INFO Channel 03/0 : 5[5] -> 6[6] via P2P/IPC/read",
    "    forward-backward ...............................: (2015.17, 2016.02)",
    "[W reducer.cpp:1300] Warning: find_unused_parameters=True was specified "
    "in DDP constructor, "
    "but did not find any unused parameters in the forward pass.",
    "[2025-02-11 09:12:44] [rank 3] torch.distributed: Using backend nccl with "
    "timeout 0:10:00",
    "    optimizer ......................................: (12.03, 12.11)",
    "Number of parameters in transformer layers in billions:  6.74",
    "[INFO] Profiler: flops counted for this interval, utilization summary "
    "written to "
    "/workspace/profile/rank3.json",
};

std::string MegatronLine(int it) {
  char buf[640];
  std::snprintf(buf, sizeof(buf),
                " [2025-02-11 09:12:%02d] iteration %8d/  500000 | consumed "
                "samples: %12d | "
                "elapsed time per iteration (ms): %.1f | throughput per GPU "
                "(TFLOP/s/GPU): %.1f | "
                "learning rate: %.6E | global batch size:   512 | lm loss: "
                "%.6E | loss scale: "
                "1.0 | grad norm: %.3f | number of skipped iterations:   0 | "
                "number of nan "
                "iterations:   0 |",
                it % 60, it, it * 512, 2000.0 + it % 13, 400.0 + it % 7, 1.5e-4,
                6.0 - it * 1e-4, 0.5 + (it % 10) * 0.01);
  return buf;
}

std::string PrimusLine(int it) {
  char buf[900];
  std::snprintf(
      buf, sizeof(buf),
      "[\x1b[32m20251023 "
      "12:39:12\x1b[0m][\x1b[36mrank-63/64\x1b[0m][\x1b[1mINFO "
      "\x1b[0m] [--------trainer.py:2382] :  iteration %8d/   40000 | consumed "
      "samples: "
      "%12d | elapsed time per iteration (ms): 16601.3/17219.3 | hip mem "
      "usage/free/total/usage_ratio: 253.38GB/2.60GB/255.98GB/98.98%% | "
      "throughput per "
      "GPU (TFLOP/s/GPU): 11.9/11.5 | tokens per GPU (tokens/s/GPU): "
      "246.7/238.1 | "
      "learning rate: 9.997254E-06 | global batch size:    64 | lm loss: %.6E "
      "| loss "
      "scale: 1.0 | grad norm: 6.142 | num zeros: 960902016.0 | number of "
      "skipped "
      "iterations:   0 | number of nan iterations:   0 |",
      it, it * 64, 4.4 - it * 1e-5);
  return buf;
}

std::string Build(size_t target_bytes, bool noise) {
  std::string s;
  std::mt19937 rng(42);
  int it = 1;
  while (s.size() < target_bytes) {
    if (noise) {
      for (int i = 0; i < 19; ++i) {
        s += kNoise[rng() % std::size(kNoise)];
        s += '\n';
      }
    }
    s += (it % 2 == 0) ? PrimusLine(it) : MegatronLine(it);
    s += '\n';
    ++it;
  }
  return s;
}

void Run(benchmark::State& state, const std::string& text) {
  size_t records = 0;
  for (auto _ : state) {
    lens::TrainingLogParser parser;
    // Feed in 1 MiB chunks, as `lens parse-log` reads.
    for (size_t pos = 0; pos < text.size(); pos += 1 << 20) {
      parser.Feed(std::string_view(text).substr(pos, 1 << 20));
      records += parser.TakeRecords().size();
    }
    parser.Finish();
    records += parser.TakeRecords().size();
    benchmark::DoNotOptimize(records);
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["records"] =
      static_cast<double>(records) / static_cast<double>(state.iterations());
}

void BM_MixedLog(benchmark::State& state) {
  static const std::string text = Build(32 << 20, true);
  Run(state, text);
}
BENCHMARK(BM_MixedLog)->Unit(benchmark::kMillisecond);

void BM_IterationLines(benchmark::State& state) {
  static const std::string text = Build(16 << 20, false);
  Run(state, text);
}
BENCHMARK(BM_IterationLines)->Unit(benchmark::kMillisecond);

void BM_TorchTitanAnsi(benchmark::State& state) {
  static const std::string text = [] {
    std::string s;
    for (int it = 1; s.size() < (8 << 20); ++it) {
      for (int rank = 0; rank < 8; ++rank) {
        s += std::to_string(rank) +
             ": 2025-03-04 00:44:44,441 - root - INFO - \x1b[36mstep: " +
             std::to_string(it) +
             "  \x1b[32mloss:  3.4370  \x1b[33mmemory: 68.57GiB(86.69%)  "
             "\x1b[34mtps: 6,785  "
             "\x1b[36mtflops: 393.05  \x1b[35mmfu: 39.73%\x1b[39m\n";
      }
    }
    return s;
  }();
  Run(state, text);
}
BENCHMARK(BM_TorchTitanAnsi)->Unit(benchmark::kMillisecond);

void BM_CriWrapped(benchmark::State& state) {
  static const std::string text = [] {
    std::string s;
    std::mt19937 rng(1);
    for (int it = 1; s.size() < (16 << 20); ++it) {
      for (int i = 0; i < 19; ++i) {
        s += "2025-01-02T03:04:05.123456789Z stdout F ";
        s += kNoise[rng() % std::size(kNoise)];
        s += '\n';
      }
      s += "2025-01-02T03:04:05.123456789Z stdout F " + MegatronLine(it) + "\n";
    }
    return s;
  }();
  Run(state, text);
}
BENCHMARK(BM_CriWrapped)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
