// Parses a training log and prints a summary of each run: what `lens parse-log`
// does by default, written against the public API only.
//
//   parse_log LOG_FILE
#include <cstdio>
#include <optional>
#include <string>

#include "lens/status.h"
#include "lens/training.h"

namespace {

// "-" for a value the log did not print.
std::string Show(std::optional<double> v, const char* format = "%.1f") {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, *v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s LOG_FILE\n", argv[0]);
    return 2;
  }

  // Errors (missing file, no permission, a directory) come back as a Status,
  // never as an exception; the message names the path.
  lens::StatusOr<lens::TrainingLog> log = lens::ParseTrainingLogFile(argv[1]);
  if (!log.ok()) {
    std::fprintf(stderr, "parse_log: %s\n", log.status().ToString().c_str());
    return 1;
  }

  for (const lens::RunSummary& run : lens::SummarizeTrainingLog(*log)) {
    std::printf("run %d (%s): %llu iterations", run.run,
                std::string(lens::TrainingFormatName(run.format)).c_str(),
                static_cast<unsigned long long>(run.iterations));
    if (run.first_iteration) {
      std::printf(", iterations %lld..%lld",
                  static_cast<long long>(*run.first_iteration),
                  static_cast<long long>(*run.last_iteration));
    }
    std::printf("%s\n", run.ended ? ", ended" : "");
    std::printf(
        "  step time p50 %s ms, TFLOP/s/GPU p50 %s, tokens/s/GPU p50 %s\n",
        Show(run.step_ms_p50).c_str(), Show(run.tflops_per_gpu_p50).c_str(),
        Show(run.tokens_per_s_per_gpu_p50).c_str());
    std::printf("  loss %s -> %s, checkpoints %llu\n",
                Show(run.first_loss, "%.4f").c_str(),
                Show(run.last_loss, "%.4f").c_str(),
                static_cast<unsigned long long>(run.checkpoints));
  }

  // Individual records: every field is optional (absent when the log did not
  // print it).
  if (!log->records.empty()) {
    const lens::IterationRecord& last = log->records.back();
    std::printf(
        "last record: run %d iteration %lld loss %s lr %s\n", last.run,
        static_cast<long long>(last.iteration),
        Show(last.Get(lens::IterationField::kLoss), "%.4f").c_str(),
        Show(last.Get(lens::IterationField::kLearningRate), "%.3e").c_str());
  }
  if (log->stats.unparsed_candidates > 0) {
    std::printf(
        "warning: %llu lines look like metrics but matched no format, e.g.: "
        "%s\n",
        static_cast<unsigned long long>(log->stats.unparsed_candidates),
        log->stats.unparsed_example.c_str());
  }
  return 0;
}
