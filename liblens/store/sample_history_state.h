// What the sample history's writer (samples.cc) and its queries and prune
// (sample_query.cc) share. Internal to liblens.
#ifndef LENS_STORE_SAMPLE_HISTORY_STATE_H_
#define LENS_STORE_SAMPLE_HISTORY_STATE_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "lens/sample_history.h"
#include "store/db.h"

namespace lens {
namespace store {

// The series ids a writer knows, by series key (metric, NUL, canonical
// labels), valid for one generation of sample_history_state: a prune that
// deletes series moves the generation on, and the ids cached under an older
// one are dropped. Thread-safe.
class SeriesCache {
 public:
  // Sets (*ids)[i] for each keys[i] cached under `generation` (first
  // dropping what is cached under another); returns the indices not found.
  std::vector<uint32_t> Find(int64_t generation,
                             std::span<const std::string* const> keys,
                             std::vector<int64_t>* ids);
  // Caches keys[i] -> ids[i] for each i in `fresh`, unless the generation
  // moved on meanwhile; starts over when it would hold more than `max`.
  void Add(int64_t generation, std::span<const std::string* const> keys,
           std::span<const uint32_t> fresh, const std::vector<int64_t>& ids,
           size_t max);

 private:
  std::mutex mu_;
  int64_t generation_ = -1;                       // GUARDED_BY(mu_)
  std::unordered_map<std::string, int64_t> ids_;  // GUARDED_BY(mu_)
};

// Inside a write transaction: locks sample_history_state's one row until the
// transaction ends (PostgreSQL: FOR UPDATE; SQLite: the write lock already
// serialises writers) and returns its generation. Appends and prunes take
// it first, so they run one at a time and a prune never deletes a series an
// append is writing samples for.
StatusOr<int64_t> LockSampleHistory(Conn& c);

}  // namespace store

struct SampleRepository::State {
  store::Database* db = nullptr;
  store::SeriesCache cache;
  std::mutex mu;
  SampleHistoryStats stats;  // GUARDED_BY(mu)
  // No search for stale series before this (one found none).
  std::chrono::steady_clock::time_point next_eviction;  // GUARDED_BY(mu)
};

}  // namespace lens

#endif  // LENS_STORE_SAMPLE_HISTORY_STATE_H_
