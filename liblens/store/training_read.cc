// The read side of TrainingRepository.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lens/store.h"
#include "store/db.h"
#include "store/text.h"
#include "store/training_codec.h"
#include "store/training_tables.h"

namespace lens {
namespace {

using store::Conn;
using store::Param;
using store::Rows;

}  // namespace

StatusOr<std::vector<TrainingRunRecord>> TrainingRepository::ListRuns(
    std::string_view workload_uid) {
  const Param p[] = {workload_uid};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::Query(
          *db_,
          "SELECT r.run, r.source, lens_us(r.created_at), MIN(p.iteration), "
          "MAX(p.iteration), COUNT(p.iteration) FROM training_runs r LEFT JOIN "
          "training_performance p ON p.workload_uid = r.workload_uid AND "
          "p.run = r.run WHERE r.workload_uid = $1 GROUP BY r.run, r.source, "
          "r.created_at ORDER BY r.run",
          p));
  std::vector<TrainingRunRecord> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    TrainingRunRecord run;
    run.workload_uid = std::string(workload_uid);
    run.run = static_cast<int32_t>(rows.Int(i, 0));
    run.source = rows.Text(i, 1);
    run.created_at = store::FromUs(rows.Int(i, 2));
    if (!rows.IsNull(i, 3)) run.first_iteration = rows.Int(i, 3);
    if (!rows.IsNull(i, 4)) run.last_iteration = rows.Int(i, 4);
    run.iterations = rows.Int(i, 5);
    out.push_back(std::move(run));
  }
  return out;
}

StatusOr<Page<IterationRecord>> TrainingRepository::ListIterations(
    const IterationQuery& q) {
  LENS_RETURN_IF_ERROR(store::CheckPage(q.page));
  if (q.workload_uid.empty()) {
    return InvalidArgumentError("iterations: workload_uid is required");
  }
  LENS_ASSIGN_OR_RETURN(std::string order,
                        store::OrderBy("iterations", q.sort,
                                       {{"iteration", "run, iteration"},
                                        {"timestamp", "ts, run, iteration"}}));
  store::Filter f;
  f.Add("workload_uid = ?", q.workload_uid);
  f.AddIf(q.run.has_value(), "run = ?", int64_t{q.run.value_or(0)});
  f.AddIf(q.min_iteration.has_value(), "iteration >= ?",
          q.min_iteration.value_or(0));
  f.AddIf(q.max_iteration.has_value(), "iteration <= ?",
          q.max_iteration.value_or(0));
  f.AddRange("ts", q.time);
  Page<IterationRecord> page{{}, 0, q.page.page_num, q.page.page_size};
  LENS_ASSIGN_OR_RETURN(Rows rows,
                        store::ReadPage(*db_, "training_performance" + f.sql(),
                                        store::IterationTable().select(), order,
                                        q.page, f, &page.total));
  page.items = store::IterationTable().ReadAll(rows);
  return page;
}

namespace {

// One run's samples. r: the run's first and last iteration (two index
// lookups) and the step; t: the target iterations first, first + step, ...
// below the last; s: the last iteration at or before each target (an index
// lookup each) and the last one, deduplicated (sparse logs map several
// targets to one record); then those records by primary key.
std::string SampleSql() {
  return "WITH RECURSIVE r(lo, hi, w) AS (SELECT lo, hi, "
         "(hi - lo + $3 - 2) / ($3 - 1) FROM (SELECT "
         "(SELECT MIN(iteration) FROM training_performance "
         "WHERE workload_uid = $1 AND run = $2) AS lo, "
         "(SELECT MAX(iteration) FROM training_performance "
         "WHERE workload_uid = $1 AND run = $2) AS hi) x "
         "WHERE lo IS NOT NULL), "
         "t(at) AS (SELECT lo FROM r UNION ALL "
         "SELECT t.at + r.w FROM t, r WHERE t.at + r.w < r.hi), "
         "s(it) AS (SELECT (SELECT MAX(iteration) FROM training_performance "
         "WHERE workload_uid = $1 AND run = $2 AND iteration <= t.at) FROM t "
         "UNION SELECT hi FROM r) "
         "SELECT " +
         store::IterationTable().select() +
         " FROM s CROSS JOIN training_performance WHERE workload_uid = $1 "
         "AND run = $2 AND iteration = s.it ORDER BY iteration";
}

}  // namespace

StatusOr<std::vector<IterationRecord>> TrainingRepository::SampleIterations(
    const IterationSampleQuery& q) {
  if (q.workload_uid.empty()) {
    return InvalidArgumentError("iteration samples: workload_uid is required");
  }
  if (q.max_points < 2 || q.max_points > 10000) {
    return InvalidArgumentError(
        "iteration samples: max_points must be in 2..10000, got " +
        std::to_string(q.max_points));
  }
  static const std::string kSampleSql = SampleSql();
  std::vector<IterationRecord> out;
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) -> Status {
    out.clear();
    const Param run_params[] = {std::string_view(q.workload_uid),
                                int64_t{q.run.value_or(0)}};
    Rows runs;
    LENS_RETURN_IF_ERROR(c.Execute(
        q.run ? "SELECT run FROM training_runs WHERE workload_uid = $1 AND "
                "run = $2"
              : "SELECT run FROM training_runs WHERE workload_uid = $1 "
                "ORDER BY run",
        std::span(run_params, q.run ? 2 : 1), &runs));
    for (size_t r = 0; r < runs.size(); ++r) {
      const Param p[] = {std::string_view(q.workload_uid), runs.Int(r, 0),
                         int64_t{q.max_points}};
      Rows rows;
      LENS_RETURN_IF_ERROR(c.Execute(kSampleSql, p, &rows));
      for (size_t i = 0; i < rows.size(); ++i)
        out.push_back(store::IterationTable().Read(rows, i));
    }
    return OkStatus();
  }));
  return out;
}

StatusOr<IterationRecord> TrainingRepository::LatestIteration(
    std::string_view workload_uid) {
  const Param p[] = {workload_uid};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::Query(*db_,
                   "SELECT " + store::IterationTable().select() +
                       " FROM training_performance WHERE workload_uid = $1 "
                       "ORDER BY run DESC, iteration DESC LIMIT 1",
                   p));
  if (rows.empty()) {
    return NotFoundError("no iterations stored for workload '" +
                         std::string(workload_uid) + "'");
  }
  return store::IterationTable().Read(rows, 0);
}

StatusOr<std::vector<TrainingEvent>> TrainingRepository::ListEvents(
    std::string_view workload_uid) {
  const Param p[] = {workload_uid};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::Query(*db_,
                   "SELECT " + store::EventTable().select() +
                       " FROM workload_events WHERE workload_uid = $1 "
                       "ORDER BY run, line, id",
                   p));
  return store::EventTable().ReadAll(rows);
}

}  // namespace lens
