// The main() of the store benchmarks: a SQLite file in a temporary
// directory and, when the test harness is built (LENS_BENCH_POSTGRES), a
// PostgreSQL server of its own, whose URLs the benchmarks read; both are
// gone when it returns.
#ifndef LENS_BENCH_BENCH_STORES_H_
#define LENS_BENCH_BENCH_STORES_H_

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#ifdef LENS_BENCH_POSTGRES
#include "postgres_server.h"
#endif

namespace lens::bench {

// Sets *sqlite_url, and *pg_url when a server starts (left empty, with a
// note on stderr, when it does not), then runs the benchmarks.
inline int RunWithStores(int argc, char** argv, const std::string& name,
                         std::string* sqlite_url, std::string* pg_url) {
  benchmark::Initialize(&argc, argv);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("lens_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  *sqlite_url = "sqlite://" + (dir / "lens.db").string();
#ifdef LENS_BENCH_POSTGRES
  auto pg = lens::test::PostgresServer::Start();
  if (pg.ok()) {
    *pg_url = (*pg)->url();
  } else {
    std::fprintf(stderr, "PostgreSQL benchmarks skipped: %s\n",
                 pg.status().message().c_str());
  }
#else
  (void)pg_url;
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace lens::bench

#endif  // LENS_BENCH_BENCH_STORES_H_
