// Follows a training log as it grows and stores what it reads for a
// workload: iterations, events (checkpoints, restarts), validations and
// memory reports, each parsed once however long the log runs.
//   follow_log <store-url> <workload-uid> <log> [--follow]
// Without --follow it stops at the end of the file; with it, it waits for
// more lines (a live run) until interrupted.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>

#include "lens/store.h"
#include "lens/training.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: follow_log STORE_URL WORKLOAD LOG [--follow]\n");
    return 2;
  }
  const bool follow = argc > 4 && std::string_view(argv[4]) == "--follow";
  auto store = lens::Store::Open(argv[1]);  // migrates a new store
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  // One writer per log source: storing the same log again rewrites the same
  // rows, and a restarted job's next log continues the run numbering.
  auto writer = (*store)->training().OpenWriter(argv[2], argv[3]);
  if (!writer.ok()) {
    std::fprintf(stderr, "%s\n", writer.status().ToString().c_str());
    return 1;
  }
  std::ifstream log(argv[3], std::ios::binary);
  if (!log) {
    std::fprintf(stderr, "cannot open %s\n", argv[3]);
    return 1;
  }

  lens::TrainingLogParser parser;
  std::string chunk(64 * 1024, '\0');
  int64_t stored = 0;
  for (;;) {
    log.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const std::streamsize got = log.gcount();
    if (got > 0) {
      parser.Feed(std::string_view(chunk.data(), static_cast<size_t>(got)));
    } else if (follow) {
      parser.Flush();  // the stream went quiet: complete the open record
      log.clear();     // forget EOF and wait for the writer to append
      std::this_thread::sleep_for(std::chrono::seconds(1));
    } else {
      parser.Finish();
    }
    auto records = parser.TakeRecords();
    auto events = parser.TakeEvents();
    auto validations = parser.TakeValidations();
    auto memory = parser.TakeMemoryReports();
    lens::Status written =
        writer->Write({records, events, validations, memory});
    if (!written.ok()) {
      std::fprintf(stderr, "%s\n", written.ToString().c_str());
      return 1;
    }
    stored += static_cast<int64_t>(records.size());
    if (got <= 0 && !follow) break;
  }

  auto runs = (*store)->training().ListRuns(argv[2]);
  if (!runs.ok()) return 1;
  std::printf("stored %lld iterations of %zu runs for %s\n",
              static_cast<long long>(stored), runs->size(), argv[2]);
  auto last = (*store)->training().LatestIteration(argv[2]);
  if (last.ok()) {
    std::printf("latest: run %d iteration %lld loss %.4f\n", last->run,
                static_cast<long long>(last->iteration),
                last->Get(lens::IterationField::kLoss).value_or(0));
  }
  return 0;
}
