// TrainingWriter: training_runs, and the rows of training_performance,
// workload_events, training_validations and training_memory_reports (their
// columns are described in training_tables.cc).
#include <algorithm>
#include <map>
#include <unordered_map>

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

// The first line of each local run in this batch.
struct FirstItem {
  uint64_t line = UINT64_MAX;
  std::optional<int64_t> iteration;
  std::optional<double> ts;
};

void NoteFirst(std::map<int32_t, FirstItem>* first, int32_t run, uint64_t line,
               std::optional<int64_t> iteration, std::optional<double> ts) {
  FirstItem& f = (*first)[run];
  if (line < f.line) f = {line, iteration, ts};
}

// Maps each new local run to a stored run inside the write transaction.
Status ResolveRuns(Conn& c, std::string_view workload, std::string_view source,
                   const std::map<int32_t, FirstItem>& first,
                   std::unordered_map<int32_t, int32_t>* runs) {
  for (const auto& [local, item] : first) {
    if (runs->count(local)) continue;
    const std::string fp =
        store::Fingerprint(source, local, item.line, item.iteration, item.ts);
    Rows rows;
    const Param p[] = {workload, std::string_view(fp)};
    LENS_RETURN_IF_ERROR(
        c.Execute("SELECT run FROM training_runs WHERE workload_uid = $1 AND "
                  "fingerprint = $2",
                  p, &rows));
    if (!rows.empty()) {
      (*runs)[local] = static_cast<int32_t>(rows.Int(0, 0));
      continue;
    }
    const Param w[] = {workload};
    LENS_RETURN_IF_ERROR(
        c.Execute("SELECT COALESCE(MAX(run), 0) + 1 FROM training_runs WHERE "
                  "workload_uid = $1",
                  w, &rows));
    const int64_t run = rows.Int(0, 0);
    const int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    const Param ins[] = {workload, run, std::string_view(fp), source, now};
    LENS_RETURN_IF_ERROR(c.Execute(
        "INSERT INTO training_runs (workload_uid, run, fingerprint, source, "
        "created_at) VALUES ($1, $2, $3, $4, lens_ts($5))",
        ins));
    (*runs)[local] = static_cast<int32_t>(run);
  }
  return OkStatus();
}

}  // namespace

struct TrainingWriter::State {
  store::Database* db;
  std::string workload_uid;
  std::string source;
  std::unordered_map<int32_t, int32_t> runs;  // local -> stored
};

TrainingWriter::TrainingWriter(store::Database* db, std::string workload_uid,
                               std::string source)
    : state_(new State{db, std::move(workload_uid), std::move(source), {}}) {}
TrainingWriter::TrainingWriter(TrainingWriter&&) noexcept = default;
TrainingWriter& TrainingWriter::operator=(TrainingWriter&&) noexcept = default;
TrainingWriter::~TrainingWriter() = default;

int32_t TrainingWriter::StoredRun(int32_t local_run) const {
  auto it = state_->runs.find(local_run);
  return it == state_->runs.end() ? 0 : it->second;
}

Status TrainingWriter::Write(std::span<const IterationRecord> records,
                             std::span<const TrainingEvent> events) {
  return Write(TrainingBatch{records, events, {}, {}});
}

Status TrainingWriter::Write(const TrainingBatch& batch) {
  const std::string_view workload = state_->workload_uid;
  LENS_ASSIGN_OR_RETURN(
      std::vector<store::IterationRow> iterations,
      store::CheckedRows(store::IterationTable(), batch.records, workload));
  LENS_ASSIGN_OR_RETURN(
      std::vector<store::EventRow> events,
      store::CheckedRows(store::EventTable(), batch.events, workload));
  LENS_ASSIGN_OR_RETURN(std::vector<store::ValidationRow> validations,
                        store::CheckedRows(store::ValidationTable(),
                                           batch.validations, workload));
  LENS_ASSIGN_OR_RETURN(
      std::vector<store::MemoryRow> memory,
      store::CheckedRows(store::MemoryTable(), batch.memory_reports, workload));
  std::map<int32_t, FirstItem> first;
  for (const IterationRecord& r : batch.records)
    NoteFirst(&first, r.run, r.line, r.iteration, r.timestamp_s);
  for (const TrainingEvent& e : batch.events)
    NoteFirst(&first, e.run, e.line, e.iteration, e.timestamp_s);
  for (const ValidationRecord& v : batch.validations)
    NoteFirst(&first, v.run, v.line, v.iteration, v.timestamp_s);
  for (const MemoryReport& m : batch.memory_reports)
    NoteFirst(&first, m.run, m.line, m.iteration, m.timestamp_s);
  std::unordered_map<int32_t, int32_t> runs;
  auto fn = [&](Conn& c) -> Status {
    runs = state_->runs;
    LENS_RETURN_IF_ERROR(
        ResolveRuns(c, state_->workload_uid, state_->source, first, &runs));
    LENS_RETURN_IF_ERROR(store::UpsertStored<IterationRecord>(
        c, store::IterationTable(), iterations, runs));
    LENS_RETURN_IF_ERROR(store::UpsertStored<TrainingEvent>(
        c, store::EventTable(), events, runs));
    LENS_RETURN_IF_ERROR(store::UpsertStored<ValidationRecord>(
        c, store::ValidationTable(), validations, runs));
    return store::UpsertStored<MemoryReport>(c, store::MemoryTable(), memory,
                                             runs);
  };
  // Two writers of one workload may pick the same new run number at once
  // (PostgreSQL); the loser's transaction fails on the key and runs again.
  Status st;
  for (int attempt = 0; attempt < 5; ++attempt) {
    st = state_->db->Write(fn);
    if (st.code() != StatusCode::kAlreadyExists) break;
  }
  if (st.ok()) state_->runs = std::move(runs);
  return st;
}

StatusOr<TrainingWriter> TrainingRepository::OpenWriter(
    std::string_view workload_uid, std::string_view source) {
  std::string uid(workload_uid), src(source);
  LENS_RETURN_IF_ERROR(store::CheckKey("training_runs", "workload_uid", &uid));
  LENS_RETURN_IF_ERROR(store::CheckText("training_runs", "source", &src, 1024));
  return TrainingWriter(db_, std::move(uid), std::move(src));
}

}  // namespace lens
