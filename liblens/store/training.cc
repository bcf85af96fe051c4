// training_runs, training_performance and the training rows of
// workload_events (the row mapping is in training_codec.cc).
#include <algorithm>
#include <map>
#include <unordered_map>

#include "lens/store.h"
#include "store/db.h"
#include "store/text.h"
#include "store/training_codec.h"

namespace lens {
namespace {

using store::ColumnKind;
using store::Conn;
using store::Param;
using store::Rows;

constexpr store::Column kIterationColumns[] = {{"workload_uid"},
                                               {"run"},
                                               {"iteration"},
                                               {"ts", ColumnKind::kTimestamp},
                                               {"format"},
                                               {"rank"},
                                               {"world_size"},
                                               {"line"},
                                               {"loss"},
                                               {"tflops_per_gpu"},
                                               {"tokens_per_s_per_gpu"},
                                               {"elapsed_ms"},
                                               {"fields", ColumnKind::kJson}};

constexpr store::Column kEventColumns[] = {
    {"workload_uid"}, {"run"},       {"event_type"},
    {"event_key"},    {"iteration"}, {"at", ColumnKind::kTimestamp},
    {"duration_s"},   {"path"},      {"format"},
    {"line"}};

Param OptInt(std::optional<int64_t> v) { return v ? Param(*v) : Param(); }

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

Status CheckRecord(const IterationRecord& r) {
  for (const auto& [k, v] : r.extra) {
    if (k.empty() || k.size() > 128) {
      return InvalidArgumentError(
          "training_performance.fields: extra field name of " +
          std::to_string(k.size()) + " bytes (must be 1..128) at iteration " +
          std::to_string(r.iteration));
    }
  }
  if (r.extra.size() > 256) {
    return InvalidArgumentError(
        "training_performance.fields: more than 256 extra fields at "
        "iteration " +
        std::to_string(r.iteration));
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
  const auto& records = batch.records;
  const auto& events = batch.events;
  std::map<int32_t, FirstItem> first;
  std::vector<std::string> fields;
  fields.reserve(records.size());
  for (const IterationRecord& r : records) {
    LENS_RETURN_IF_ERROR(CheckRecord(r));
    NoteFirst(&first, r.run, r.line, r.iteration, r.timestamp_s);
    fields.push_back(store::FieldsJson(r));
  }
  std::vector<std::string> paths, keys(events.size());
  paths.reserve(events.size());
  for (const TrainingEvent& e : events) {
    NoteFirst(&first, e.run, e.line, e.iteration, e.timestamp_s);
    paths.push_back(e.path);
    LENS_RETURN_IF_ERROR(store::CheckText("workload_events", "path",
                                          &paths.back(), store::kMaxTextBytes));
  }
  for (const ValidationRecord& v : batch.validations)
    NoteFirst(&first, v.run, v.line, v.iteration, v.timestamp_s);
  for (const MemoryReport& m : batch.memory_reports)
    NoteFirst(&first, m.run, m.line, m.iteration, m.timestamp_s);
  std::unordered_map<int32_t, int32_t> runs;
  auto fn = [&](Conn& c) -> Status {
    runs = state_->runs;
    LENS_RETURN_IF_ERROR(
        ResolveRuns(c, state_->workload_uid, state_->source, first, &runs));
    std::vector<std::vector<Param>> rows;
    rows.reserve(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      const IterationRecord& r = records[i];
      rows.push_back(
          {state_->workload_uid, int64_t{runs.at(r.run)}, r.iteration,
           OptInt(store::TimeUs(r.timestamp_s)), TrainingFormatName(r.format),
           r.rank ? Param(int64_t{*r.rank}) : Param(),
           r.world_size ? Param(int64_t{*r.world_size}) : Param(),
           static_cast<int64_t>(r.line),
           store::Finite(r.Get(IterationField::kLoss)),
           store::Finite(r.Get(IterationField::kTflopsPerGpu)),
           store::Finite(r.Get(IterationField::kTokensPerSPerGpu)),
           store::Finite(r.Get(IterationField::kElapsedMs)), fields[i]});
    }
    LENS_RETURN_IF_ERROR(
        store::UpsertRows(c, {"training_performance", kIterationColumns, 3},
                          rows)
            .status());
    rows.clear();
    for (size_t i = 0; i < events.size(); ++i) {
      const TrainingEvent& e = events[i];
      rows.push_back(
          {state_->workload_uid, int64_t{runs.at(e.run)},
           TrainingEventTypeName(e.type), store::EventKey(e, &keys[i]),
           OptInt(e.iteration), OptInt(store::TimeUs(e.timestamp_s)),
           store::Finite(e.duration_s), paths[i], TrainingFormatName(e.format),
           static_cast<int64_t>(e.line)});
    }
    LENS_RETURN_IF_ERROR(
        store::UpsertRows(c, {"workload_events", kEventColumns, 4}, rows)
            .status());
    return store::WriteEvaluations(c, state_->workload_uid, runs,
                                   batch.validations, batch.memory_reports);
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
