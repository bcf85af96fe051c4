// The sample history's writer: sample_series, samples (queries and pruning:
// sample_query.cc).
#include <chrono>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lens/store.h"
#include "store/db.h"
#include "store/sample_history_state.h"
#include "store/sample_series.h"
#include "store/text.h"

namespace lens {
namespace {

using store::Conn;
using store::Param;
using store::Rows;

// One call's distinct series and its samples, checked and rounded.
struct Prepared {
  // Series key (metric, NUL, canonical labels) -> index into `series`.
  std::unordered_map<std::string, uint32_t> index;
  std::vector<const std::string*> series;  // keys, in first-seen order
  std::vector<size_t> metric_bytes;        // of each key's metric part
  struct Point {
    uint32_t series;
    int64_t bucket_ms;
    double value;
  };
  std::vector<Point> points;
};

Status Prepare(std::span<const MetricSample> samples,
               const SampleHistoryOptions& o, Prepared* out) {
  if (o.resolution.count() < 1 || o.max_series < 1) {
    return InvalidArgumentError(
        "samples: SampleHistoryOptions needs a resolution of at least 1 ms "
        "and max_series of at least 1");
  }
  const int64_t step = o.resolution.count();
  out->points.reserve(samples.size());
  std::string metric, labels, key;
  uint32_t last = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const MetricSample& s = samples[i];
    if (s.timestamp_ms < 0) {
      return InvalidArgumentError("samples[" + std::to_string(i) +
                                  "].timestamp_ms: must be >= 0, got " +
                                  std::to_string(s.timestamp_ms));
    }
    // Remote write lists a series' samples together: reuse its key.
    const bool same = i > 0 && s.metric == samples[i - 1].metric &&
                      s.labels == samples[i - 1].labels;
    if (!same) {
      const std::string where = "samples[" + std::to_string(i) + "]";
      LENS_RETURN_IF_ERROR(store::SeriesMetric(where, s.metric, &metric));
      LENS_RETURN_IF_ERROR(store::SeriesLabels(where, s.labels, &labels));
      key.assign(metric).append(1, '\0').append(labels);
      auto [it, added] = out->index.try_emplace(
          key, static_cast<uint32_t>(out->series.size()));
      if (added) {
        out->series.push_back(&it->first);
        out->metric_bytes.push_back(metric.size());
      }
      last = it->second;
    }
    // Rounded down: times are >= 0.
    out->points.push_back({last, s.timestamp_ms / step * step, s.value});
  }
  return OkStatus();
}

const store::UpsertSpec& SamplesSpec() {
  static constexpr store::Column kColumns[] = {
      {"series_id"}, {"ts_ms"}, {"value"}};
  static const store::UpsertSpec spec{"samples", kColumns, 2};
  return spec;
}

// Each series' id in this transaction.
struct Resolved {
  int64_t generation = 0;
  std::vector<int64_t> ids;     // per series of Prepared; 0: refused
  std::vector<uint32_t> fresh;  // series found or created in the database
  size_t refused = 0;
  int64_t evicted = 0;  // stale series removed to make room
  bool eviction_tried = false;
};

// At the limit: deletes up to `want` series (oldest first) that have no
// point in [now - evict_after, now + evict_after], and their points, except
// the series this call writes to (`keep`); returns how many went.
StatusOr<int64_t> EvictStale(Conn& c, const SampleHistoryOptions& o,
                             size_t want, const std::vector<int64_t>& keep) {
  std::unordered_set<int64_t> kept;
  for (const int64_t id : keep) {
    if (id != 0) kept.insert(id);
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const int64_t span = o.evict_after.count();
  const Param q[] = {now - span, now + span,
                     static_cast<int64_t>(want + kept.size())};
  Rows victims;
  LENS_RETURN_IF_ERROR(c.Execute(
      "SELECT id FROM sample_series s WHERE NOT EXISTS (SELECT 1 FROM "
      "samples p WHERE p.series_id = s.id AND p.ts_ms BETWEEN $1 AND $2) "
      "ORDER BY id LIMIT $3",
      q, &victims));
  int64_t gone = 0;
  for (size_t i = 0; i < victims.size() && static_cast<size_t>(gone) < want;
       ++i) {
    if (kept.count(victims.Int(i, 0)) != 0) continue;
    const Param id[] = {victims.Int(i, 0)};
    LENS_RETURN_IF_ERROR(
        c.Execute("DELETE FROM samples WHERE series_id = $1", id));
    LENS_RETURN_IF_ERROR(
        c.Execute("DELETE FROM sample_series WHERE id = $1", id));
    ++gone;
  }
  return gone;
}

// Finds the `missing` series in the database, creating those not there
// while it holds fewer than `max_series` (evicting stale series once when
// it is full, unless `may_evict` is false).
Status LookUpOrCreate(Conn& c, const Prepared& p, const SampleHistoryOptions& o,
                      bool may_evict, std::span<const uint32_t> missing,
                      Resolved* r) {
  std::optional<int64_t> count;
  bool tried_eviction = !may_evict || o.evict_after.count() <= 0;
  for (size_t m = 0; m < missing.size(); ++m) {
    const uint32_t i = missing[m];
    const std::string_view key = *p.series[i];
    const Param q[] = {key.substr(0, p.metric_bytes[i]),
                       key.substr(p.metric_bytes[i] + 1)};
    Rows found;
    LENS_RETURN_IF_ERROR(c.Execute(
        "SELECT id FROM sample_series WHERE metric = $1 AND labels = $2", q,
        &found));
    if (found.empty()) {
      if (!count) {
        Rows all;
        LENS_RETURN_IF_ERROR(
            c.Execute("SELECT count(*) FROM sample_series", {}, &all));
        count = all.Int(0, 0);
      }
      if (*count >= static_cast<int64_t>(o.max_series) && !tried_eviction) {
        tried_eviction = true;
        r->eviction_tried = true;
        LENS_ASSIGN_OR_RETURN(const int64_t gone,
                              EvictStale(c, o, missing.size() - m, r->ids));
        r->evicted += gone;
        *count -= gone;
      }
      if (*count >= static_cast<int64_t>(o.max_series)) {
        ++r->refused;
        continue;
      }
      LENS_RETURN_IF_ERROR(c.Execute(
          "INSERT INTO sample_series (metric, labels) VALUES ($1, $2) "
          "RETURNING id",
          q, &found));
      ++*count;
    }
    r->ids[i] = found.Int(0, 0);
    r->fresh.push_back(i);
  }
  if (r->evicted == 0) return OkStatus();
  // Writers drop the ids they cached (sample_history_state.h); this call's
  // own ids were read after the eviction.
  LENS_RETURN_IF_ERROR(c.Execute(
      "UPDATE sample_history_state SET generation = generation + 1", {}));
  ++r->generation;
  return OkStatus();
}

// Upserts the points of the series not refused; returns the rows written.
StatusOr<size_t> WritePoints(Conn& c, const Prepared& p,
                             const std::vector<int64_t>& ids) {
  std::vector<std::vector<Param>> rows;
  rows.reserve(p.points.size());
  for (const Prepared::Point& pt : p.points) {
    const int64_t id = ids[pt.series];
    if (id == 0) continue;
    // NaN as NULL: SQLite stores it so, PostgreSQL would keep NaN; one form
    // on both.
    rows.push_back(
        {id, pt.bucket_ms, std::isnan(pt.value) ? Param() : Param(pt.value)});
  }
  return store::UpsertRows(c, SamplesSpec(), rows);
}

}  // namespace

namespace store {

StatusOr<int64_t> LockSampleHistory(Conn& c) {
  Rows rows;
  LENS_RETURN_IF_ERROR(
      c.Execute(c.dialect() == Dialect::kPostgres
                    ? "SELECT generation FROM sample_history_state FOR UPDATE"
                    : "SELECT generation FROM sample_history_state",
                {}, &rows));
  if (rows.empty()) {
    return InternalError("sample_history_state: its row is missing");
  }
  return rows.Int(0, 0);
}

std::vector<uint32_t> SeriesCache::Find(
    int64_t generation, std::span<const std::string* const> keys,
    std::vector<int64_t>* ids) {
  std::vector<uint32_t> missing;
  std::lock_guard lock(mu_);
  if (generation_ != generation) {
    ids_.clear();
    generation_ = generation;
  }
  for (uint32_t i = 0; i < keys.size(); ++i) {
    auto it = ids_.find(*keys[i]);
    if (it != ids_.end()) {
      (*ids)[i] = it->second;
    } else {
      missing.push_back(i);
    }
  }
  return missing;
}

void SeriesCache::Add(int64_t generation,
                      std::span<const std::string* const> keys,
                      std::span<const uint32_t> fresh,
                      const std::vector<int64_t>& ids, size_t max) {
  std::lock_guard lock(mu_);
  // Ids read under an older generation may name pruned series.
  if (generation_ != generation) return;
  if (ids_.size() + fresh.size() > max) ids_.clear();
  for (const uint32_t i : fresh) ids_.emplace(*keys[i], ids[i]);
}

}  // namespace store

SampleRepository::SampleRepository(store::Database* db)
    : state_(std::make_unique<State>()) {
  state_->db = db;
}

SampleRepository::~SampleRepository() = default;

SampleHistoryStats SampleRepository::stats() const {
  std::lock_guard lock(state_->mu);
  return state_->stats;
}

Status SampleRepository::AppendSamples(std::span<const MetricSample> samples,
                                       const SampleHistoryOptions& options) {
  Prepared p;
  LENS_RETURN_IF_ERROR(Prepare(samples, options, &p));
  if (p.points.empty()) return OkStatus();
  Resolved r;
  size_t written = 0;
  // A search for stale series that found none is not repeated for 10 s: a
  // full history of live series would otherwise scan every series on every
  // write that brings a new one.
  const auto now = std::chrono::steady_clock::now();
  bool may_evict;
  {
    std::lock_guard lock(state_->mu);
    may_evict = now >= state_->next_eviction;
  }
  LENS_RETURN_IF_ERROR(state_->db->Write([&](Conn& c) -> Status {
    r = {};  // a retried transaction starts over
    r.ids.assign(p.series.size(), 0);
    LENS_ASSIGN_OR_RETURN(r.generation, store::LockSampleHistory(c));
    const std::vector<uint32_t> missing =
        state_->cache.Find(r.generation, p.series, &r.ids);
    LENS_RETURN_IF_ERROR(LookUpOrCreate(c, p, options, may_evict, missing, &r));
    LENS_ASSIGN_OR_RETURN(written, WritePoints(c, p, r.ids));
    return OkStatus();
  }));
  state_->cache.Add(r.generation, p.series, r.fresh, r.ids, options.max_series);
  size_t refused_samples = 0;
  for (const Prepared::Point& pt : p.points) {
    if (r.ids[pt.series] == 0) ++refused_samples;
  }
  {
    std::lock_guard lock(state_->mu);
    state_->stats.samples_written += written;
    state_->stats.samples_refused += refused_samples;
    state_->stats.series_refused += r.refused;
    state_->stats.series_evicted += static_cast<uint64_t>(r.evicted);
    if (r.eviction_tried && r.evicted == 0) {
      state_->next_eviction = now + std::chrono::seconds(10);
    }
  }
  if (r.refused == 0) return OkStatus();
  return ResourceExhaustedError(
      "samples: " + std::to_string(r.refused) + " new series refused (" +
      std::to_string(refused_samples) +
      " samples): the sample history holds its limit of " +
      std::to_string(options.max_series) +
      " series (SampleHistoryOptions::max_series), none of them stale; the "
      "samples of known series were written");
}

}  // namespace lens
