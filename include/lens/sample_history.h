// The store's bounded sample history: metric samples kept in the store when
// there is no VictoriaMetrics or Prometheus (embedded mode, `lens up`), so
// the API can still draw them. Reached through lens::Store::samples()
// (lens/store.h); docs/storage.md, "Sample history".
//
// A series is a metric name and its labels. The history keeps at most one
// point per series per resolution step, at most max_series series, and
// what its owner does not prune.
#ifndef LENS_SAMPLE_HISTORY_H_
#define LENS_SAMPLE_HISTORY_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "lens/export.h"
#include "lens/status.h"

namespace lens {

namespace store {
class Database;  // internal
}

// One sample of one series, as remote write carries it.
struct MetricSample {
  std::string metric;  // the metric name (Prometheus' __name__)
  // The other labels, in any order. A label with an empty value is no label
  // (as in Prometheus); a name twice, or __name__, is kInvalidArgument.
  std::vector<std::pair<std::string, std::string>> labels;
  int64_t timestamp_ms = 0;  // Unix milliseconds, >= 0
  double value = 0;
};

struct SampleHistoryOptions {
  // One point per series per step: a sample's time is rounded down to a
  // multiple of it, and a later write of that point replaces its value.
  std::chrono::milliseconds resolution{15000};
  // How long the owner keeps points: the store does not prune by itself;
  // its owner calls PruneSamples(now - retention) from time to time.
  std::chrono::hours retention{24 * 7};
  // Series the history holds at most. At the limit, a new series takes the
  // place of the oldest series with no point within evict_after of now (by
  // the wall clock, either side: a series dated in the future holds no
  // place either), so series written once and abandoned (a flood of junk,
  // pods long gone) cannot lock out live ones; with no such series, samples
  // of new series are refused (kResourceExhausted) while known series are
  // still written. evict_after 0: never evict.
  size_t max_series = 100000;
  std::chrono::milliseconds evict_after{std::chrono::minutes(15)};
};

struct SampleQuery {
  std::string metric;  // required
  // Label equality matchers, all of which must hold; a value "" matches a
  // series without the label. Values are bound as parameters, never SQL.
  std::vector<std::pair<std::string, std::string>> matchers;
  int64_t from_ms = 0;  // inclusive, Unix milliseconds
  int64_t to_ms = 0;    // inclusive
  // More matching series than this is kResourceExhausted (narrow the
  // matchers); 1..100000.
  size_t max_series = 10000;
};

struct SamplePoint {
  int64_t timestamp_ms = 0;  // the start of its resolution step
  double value = 0;          // NaN, +Inf and -Inf come back as written
};

struct SeriesSamples {
  std::string metric;
  std::vector<std::pair<std::string, std::string>> labels;  // sorted by name
  std::vector<SamplePoint> points;                          // in time order
};

// Counters since the Store was opened.
struct SampleHistoryStats {
  uint64_t samples_written = 0;  // points written (after rounding)
  uint64_t samples_refused = 0;  // samples of series refused over max_series
  uint64_t series_refused = 0;   // new series refused, once per call
  uint64_t series_evicted = 0;   // stale series removed to make room
};

// Thread-safe. Appends are serialised: one at a time per database (a row
// lock on PostgreSQL, the write lock on SQLite), so that the series bound
// holds and a prune never removes a series an append is writing to.
class LENS_EXPORT SampleRepository {
 public:
  ~SampleRepository();
  SampleRepository(const SampleRepository&) = delete;
  SampleRepository& operator=(const SampleRepository&) = delete;

  // Writes `samples` in one transaction: each at its time rounded down to
  // options.resolution, replacing the point of its series at that time if
  // there is one (last write wins, within a call too). A NaN value
  // (Prometheus' staleness marker included) is stored as NULL and reads back
  // as a quiet NaN; the infinities are stored as they are. Series ids are
  // cached in memory (at most max_series of them), so a steady stream looks
  // up no series. kInvalidArgument, nothing written, for a bad sample (an
  // empty metric, a name over 253 bytes, labels over 2,048 bytes as JSON, a
  // negative time, bad options), naming the sample; kResourceExhausted when
  // new series were refused over max_series (the others' samples written).
  // At the limit, stale series are evicted first (evict_after above); a
  // search that found none is not repeated for 10 s.
  Status AppendSamples(std::span<const MetricSample> samples,
                       const SampleHistoryOptions& options = {});

  // The series of q.metric matching q.matchers that have points in
  // [q.from_ms, q.to_ms], each with those points, ordered by labels.
  // kInvalidArgument for an empty metric, from_ms > to_ms or a max_series
  // out of range; kResourceExhausted when more than q.max_series series
  // match.
  StatusOr<std::vector<SeriesSamples>> QuerySamples(const SampleQuery& q);

  // Deletes the points older than `older_than_ms` and the series left
  // without points, in one transaction; returns the points deleted.
  StatusOr<int64_t> PruneSamples(int64_t older_than_ms);

  SampleHistoryStats stats() const;

 private:
  friend class Store;
  explicit SampleRepository(store::Database* db);
  struct State;  // the database, the series cache and counters (samples.cc)
  std::unique_ptr<State> state_;
};

}  // namespace lens

#endif  // LENS_SAMPLE_HISTORY_H_
