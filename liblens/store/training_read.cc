// The read side of TrainingRepository.
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
