// Training-log parser throughput (bytes/s, one core), inputs fed in 1 MiB
// chunks as `lens parse-log` reads them:
//   BM_MixedLog            1 line in 20 an iteration line, the rest generic
//                          noise (budget >= 1 GB/s)
//   BM_FrameworkNoise      100 MB: Megatron/Primus iteration lines among real
//                          lines of other frameworks (DeepSpeed engine and
//                          timer lines, HF dicts, tqdm bars, TorchTitan steps,
//                          NeMo lines) (budget >= 500 MB/s)
//   BM_ManyRuns            100 MB, 100,000 runs (budget >= 500 MB/s)
//   BM_IterationLines      iteration lines only, current Megatron and Primus
//                          with ANSI colours, varied numbers
//                          (budget >= 450 MB/s)
//   BM_TorchTitanAnsi      TorchTitan lines with ANSI codes and rank prefixes
//   BM_CriWrapped          Megatron lines inside CRI records
//   BM_SummaryManyRuns     the per-run summary of 100,000 runs (items/s)
// and `lens parse-log` end to end (BM_ParseLogCli: wall time and max RSS of
// the real binary per output format; budget <= 16 MB RSS).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "lens/training.h"

namespace {

// Generic noise lines (data loading, NCCL, timers, warnings), 60-200 bytes.
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

class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {}
  double Uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng_);
  }
  int Int(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  size_t Pick(size_t n) { return rng_() % n; }

 private:
  std::mt19937 rng_;
};

std::string Format(const char* fmt, auto... args) {
  char buf[1200];
  int n = std::snprintf(buf, sizeof(buf), fmt, args...);
  return std::string(buf, static_cast<size_t>(n));
}

// Megatron-LM core 0.13+ training_log().
std::string MegatronLine(int it, Gen& g) {
  return Format(
      " [2025-10-01 12:%02d:%02d.%06d] iteration %8d/  500000 | consumed "
      "samples: %12d | elapsed time per iteration (ms): %.1f | throughput per "
      "GPU (TFLOP/s/GPU): %.1f | learning rate: %.6E | global batch size: "
      "  512 | lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of "
      "skipped iterations:   0 | number of nan iterations:   0 |",
      it / 60 % 60, it % 60, g.Int(0, 999999), it, it * 512,
      g.Uniform(1900, 2200), g.Uniform(380, 420), g.Uniform(1e-5, 3e-4),
      g.Uniform(1.5, 9.0), g.Uniform(0.1, 2.0));
}

// Primus (2025-2026): the Megatron line behind Primus's coloured prefix, X/Y
// pairs, HIP memory.
std::string PrimusLine(int it, Gen& g) {
  const double ms = g.Uniform(16000, 17500);
  const double tflops = g.Uniform(300, 420);
  const double tokens = g.Uniform(3000, 4000);
  const double used = g.Uniform(150, 250);
  return Format(
      "[\x1b[32m20251023 12:%02d:%02d\x1b[0m][\x1b[36mrank-63/64\x1b[0m]"
      "[\x1b[1mINFO \x1b[0m] [--------trainer.py:2382] :  iteration %8d/   "
      "40000 | consumed samples: %12d | elapsed time per iteration (ms): "
      "%.1f/%.1f | hip mem usage/free/total/usage_ratio: "
      "%.2fGB/%.2fGB/255.98GB/%.2f%% | throughput per GPU (TFLOP/s/GPU): "
      "%.1f/%.1f | tokens per GPU (tokens/s/GPU): %.1f/%.1f | learning rate: "
      "%.6E | global batch size:    64 | lm loss: %.6E | loss scale: 1.0 | "
      "grad norm: %.3f | num zeros: %.1f | number of skipped iterations:   0 | "
      "number of nan iterations:   0 |",
      it / 60 % 60, it % 60, it, it * 64, ms, ms * g.Uniform(0.98, 1.02), used,
      255.98 - used, used / 2.5598, tflops, tflops * g.Uniform(0.98, 1.02),
      tokens, tokens * g.Uniform(0.98, 1.02), g.Uniform(1e-6, 1e-5),
      g.Uniform(1.5, 9.0), g.Uniform(0.1, 8.0), g.Uniform(0, 1e9));
}

std::string IterationLine(int it, Gen& g) {
  return it % 2 == 0 ? PrimusLine(it, g) : MegatronLine(it, g);
}

// Lines of other frameworks, as they print them (docs/training-log-schema.md
// names each source).
std::string FrameworkNoiseLine(int step, Gen& g) {
  switch (g.Pick(7)) {
    case 0:
      return Format(
          "[2024-02-07 16:23:43,034] [INFO] [logging.py:96:log_dist] [Rank 0] "
          "step=%d, skipped=%d, lr=[%.17g, %.17g], mom=[(0.9, 0.95), (0.9, "
          "0.95)]",
          step, g.Int(0, 9), 8e-6, 8e-6);
    case 1:
      return Format(
          "[2023-11-20 06:41:15,090] [INFO] [timer.py:260:stop] "
          "epoch=0/micro_step=%d/global_step=%d, "
          "RunningAvgSamplesPerSec=%.13g, "
          "CurrSamplesPerSec=%.13g, MemAllocated=5.87GB, "
          "MaxMemAllocated=21.34GB",
          step, step, g.Uniform(250, 270), g.Uniform(250, 270));
    case 2:
      return Format(
          "{'loss': %.4f, 'grad_norm': %.6g, 'learning_rate': %.6g, 'epoch': "
          "%.2f}",
          g.Uniform(1, 3), g.Uniform(0.5, 9), 5e-05, g.Uniform(0, 3));
    case 3:
      return Format(" %2d%%|%-10s| %d/1000 [00:%02d<44:53, %.2fs/it]",
                    step % 100, "#####", step % 1000, step % 60,
                    g.Uniform(20, 30));
    case 4:
      return Format(
          "[rank0]:2025-03-04 00:44:44,441 - root - INFO - \x1b[31mstep: %d  "
          "\x1b[32mloss: %7.4f  \x1b[33mmemory: 68.57GiB(86.69%%)  "
          "\x1b[34mtps: %s  \x1b[36mtflops: %.2f  \x1b[35mmfu: %.2f%%\x1b[39m",
          step, g.Uniform(2, 4), "6,785", g.Uniform(380, 400),
          g.Uniform(38, 41));
    case 5:
      return Format(
          "Training epoch 0, iteration %d/999 | lr: 2.999e-06 | global_step: "
          "%d | reduced_train_loss: %.4f | train_step_timing in s: %.4g | "
          "consumed_samples: %d",
          step % 1000, step, g.Uniform(2, 11), g.Uniform(1.9, 2.1), step * 256);
    default:
      return Format(
          "steps: %d loss: %.4f iter time (s): %.3f samples/sec: %.3f", step,
          g.Uniform(2, 10), g.Uniform(11, 15), g.Uniform(34, 45));
  }
}

enum class Kind { kMixed, kFrameworkNoise, kManyRuns, kIterations };

std::string Build(Kind kind, size_t target_bytes) {
  std::string s;
  s.reserve(target_bytes + 4096);
  Gen g(42);
  int it = 1, run_len = 0;
  while (s.size() < target_bytes) {
    switch (kind) {
      case Kind::kMixed:
        for (int i = 0; i < 19; ++i) {
          s += kNoise[g.Pick(std::size(kNoise))];
          s += '\n';
        }
        break;
      case Kind::kFrameworkNoise:
        for (int i = 0; i < 5; ++i) {
          s += kNoise[g.Pick(std::size(kNoise))];
          s += '\n';
          s += FrameworkNoiseLine(it * 10 + i, g);
          s += '\n';
        }
        break;
      case Kind::kManyRuns:
        // About 1 KB a run: a restart, two iterations, a noise line in every
        // other run.
        if (run_len == 2) {
          s += "training ...\n";
          it = g.Int(1, 1000);
          run_len = 0;
        }
        if (++run_len == 1 && it % 2 == 0) {
          s += kNoise[g.Pick(std::size(kNoise))];
          s += '\n';
        }
        break;
      case Kind::kIterations:
        break;
    }
    s += IterationLine(it, g);
    s += '\n';
    ++it;
  }
  return s;
}

const std::string& Log(Kind kind) {
  static const std::string mixed = Build(Kind::kMixed, 32 << 20);
  static const std::string noise = Build(Kind::kFrameworkNoise, 100 << 20);
  static const std::string runs = Build(Kind::kManyRuns, 100 << 20);
  static const std::string iterations = Build(Kind::kIterations, 32 << 20);
  switch (kind) {
    case Kind::kMixed:
      return mixed;
    case Kind::kFrameworkNoise:
      return noise;
    case Kind::kManyRuns:
      return runs;
    case Kind::kIterations:
      return iterations;
  }
  return mixed;
}

void Run(benchmark::State& state, const std::string& text) {
  size_t records = 0;
  int32_t runs = 0;
  std::vector<lens::IterationRecord> batch;
  for (auto _ : state) {
    lens::TrainingLogParser parser;
    for (size_t pos = 0; pos < text.size(); pos += 1 << 20) {
      parser.Feed(std::string_view(text).substr(pos, 1 << 20));
      parser.TakeRecords(&batch);
      records += batch.size();
      parser.TakeEvents();
    }
    parser.Finish();
    parser.TakeRecords(&batch);
    records += batch.size();
    runs = parser.current_run();
    benchmark::DoNotOptimize(records);
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["records"] =
      static_cast<double>(records) / static_cast<double>(state.iterations());
  state.counters["runs"] = runs;
}

void BM_MixedLog(benchmark::State& state) { Run(state, Log(Kind::kMixed)); }
BENCHMARK(BM_MixedLog)->Unit(benchmark::kMillisecond);

void BM_FrameworkNoise(benchmark::State& state) {
  Run(state, Log(Kind::kFrameworkNoise));
}
BENCHMARK(BM_FrameworkNoise)->Unit(benchmark::kMillisecond);

void BM_ManyRuns(benchmark::State& state) { Run(state, Log(Kind::kManyRuns)); }
BENCHMARK(BM_ManyRuns)->Unit(benchmark::kMillisecond);

void BM_IterationLines(benchmark::State& state) {
  Run(state, Log(Kind::kIterations));
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
    Gen g(1);
    for (int it = 1; s.size() < (16 << 20); ++it) {
      for (int i = 0; i < 19; ++i) {
        s += "2025-01-02T03:04:05.123456789Z stdout F ";
        s += kNoise[g.Pick(std::size(kNoise))];
        s += '\n';
      }
      s += "2025-01-02T03:04:05.123456789Z stdout F " + MegatronLine(it, g) +
           "\n";
    }
    return s;
  }();
  Run(state, text);
}
BENCHMARK(BM_CriWrapped)->Unit(benchmark::kMillisecond);

// Adding 100,000 runs of 3 records to a summary: the cost per item must not
// grow with the runs before it.
void BM_SummaryManyRuns(benchmark::State& state) {
  lens::IterationRecord r;
  r.Set(lens::IterationField::kElapsedMs, 1000);
  r.Set(lens::IterationField::kLoss, 2.5);
  for (auto _ : state) {
    lens::TrainingSummaryBuilder b;
    for (int32_t run = 1; run <= 100000; ++run) {
      r.run = run;
      for (int it = 1; it <= 3; ++it) {
        r.iteration = it;
        b.Add(r);
      }
    }
    benchmark::DoNotOptimize(b.Build());
  }
  state.SetItemsProcessed(state.iterations() * 300000);
}
BENCHMARK(BM_SummaryManyRuns)->Unit(benchmark::kMillisecond);

#ifdef LENS_CLI_BIN
// Runs `lens parse-log` children for BM_ParseLogCli from a process forked
// before the benchmark generates its logs. A child forked from the benchmark
// itself would count the benchmark's hundreds of MB, inherited up to its
// exec, in its maximum RSS (Linux keeps the peak across exec); a child of
// this small process reports only its own.
class Spawner {
 public:
  // Forks the spawner; call first thing in main().
  static void Start() {
    int to[2], from[2];
    if (::pipe(to) != 0 || ::pipe(from) != 0) return;
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(to[1]);
      ::close(from[0]);
      Serve(to[0], from[1]);
      ::_exit(0);
    }
    ::close(to[0]);
    ::close(from[1]);
    out_ = to[1];
    in_ = from[0];
  }
  // Runs `lens parse-log --format FORMAT PATH > /dev/null`; returns its
  // maximum RSS in KB, or -1 when it failed.
  static long Run(const std::string& format, const std::string& path) {
    if (out_ < 0) return -1;
    std::string req = format + "\t" + path + "\n";
    if (::write(out_, req.data(), req.size()) !=
        static_cast<ssize_t>(req.size()))
      return -1;
    long rss = -1;
    if (::read(in_, &rss, sizeof(rss)) != sizeof(rss)) return -1;
    return rss;
  }

 private:
  static void Serve(int in, int out) {
    std::string pending;
    char buf[4096];
    while (true) {
      size_t nl = pending.find('\n');
      if (nl == std::string::npos) {
        ssize_t n = ::read(in, buf, sizeof(buf));
        if (n <= 0) return;
        pending.append(buf, static_cast<size_t>(n));
        continue;
      }
      std::string req = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      size_t tab = req.find('\t');
      std::string format = req.substr(0, tab), path = req.substr(tab + 1);
      pid_t pid = ::fork();
      if (pid == 0) {
        std::freopen("/dev/null", "w", stdout);
        ::execl(LENS_CLI_BIN, "lens", "parse-log", "--format", format.c_str(),
                path.c_str(), nullptr);
        ::_exit(127);
      }
      int status = 0;
      struct rusage ru {};
      ::wait4(pid, &status, 0, &ru);
      long rss = WIFEXITED(status) && WEXITSTATUS(status) == 0
                     ? static_cast<long>(ru.ru_maxrss)
                     : -1;
      if (::write(out, &rss, sizeof(rss)) != sizeof(rss)) return;
    }
  }
  static inline int out_ = -1, in_ = -1;
};

// `lens parse-log --format F FILE > /dev/null` as a child; reports its wall
// time and maximum RSS. Budget: RSS <= 16 MB in every format.
void BM_ParseLogCli(benchmark::State& state) {
  static const char* const kFormats[] = {"summary", "jsonl", "csv", "table",
                                         "json"};
  static const Kind kKinds[] = {Kind::kFrameworkNoise, Kind::kManyRuns};
  const Kind kind = kKinds[state.range(0)];
  const char* format = kFormats[state.range(1)];
  // The logs are written once per process and removed at its exit.
  static struct Files {
    std::string path[2];
    ~Files() {
      for (const auto& p : path) std::remove(p.c_str());
    }
  } files;
  std::string& path = files.path[state.range(0)];
  const std::string& text = Log(kind);
  if (path.empty()) {
    path = "/tmp/lens-bench-training-" + std::to_string(::getpid()) + "-" +
           std::to_string(state.range(0)) + ".log";
    std::ofstream(path) << text;
  }
  long max_rss_kb = 0;
  for (auto _ : state) {
    long rss = Spawner::Run(format, path);
    if (rss < 0) {
      state.SkipWithError("lens parse-log failed");
      break;
    }
    max_rss_kb = std::max(max_rss_kb, rss);
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["max_rss_mb"] = static_cast<double>(max_rss_kb) / 1024;
  if (max_rss_kb > 16 * 1024) state.SkipWithError("over budget: RSS > 16 MB");
  state.SetLabel(
      std::string(kind == Kind::kManyRuns ? "100k runs " : "noise ") + format);
}
BENCHMARK(BM_ParseLogCli)
    ->ArgsProduct({{0, 1}, {0, 1, 2, 3, 4}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);
#endif

}  // namespace

int main(int argc, char** argv) {
#ifdef LENS_CLI_BIN
  Spawner::Start();
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
