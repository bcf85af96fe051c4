// The four training tables described once (store/table.h). A row written is
// a parser record, the workload it belongs to and the run it was stored as;
// a row read is the record again (with the stored run).
#ifndef LENS_STORE_TRAINING_TABLES_H_
#define LENS_STORE_TRAINING_TABLES_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lens/training.h"
#include "store/table.h"

namespace lens::store {

template <typename T>
struct StoredRow {
  const T* record = nullptr;
  std::string_view workload;
  int64_t run = 0;  // the stored run
  // Text the row owns once checked: an event's path or a memory report's
  // context, sanitised.
  std::string text;
};

using IterationRow = StoredRow<IterationRecord>;
using EventRow = StoredRow<TrainingEvent>;
using ValidationRow = StoredRow<ValidationRecord>;
using MemoryRow = StoredRow<MemoryReport>;

// training_performance: the typed columns (loss, TFLOP/s, tokens/s,
// elapsed) are written for filtering and sorting; a record is read back
// from `fields`.
const Table<IterationRow, IterationRecord>& IterationTable();
// workload_events.
const Table<EventRow, TrainingEvent>& EventTable();
// training_validations.
const Table<ValidationRow, ValidationRecord>& ValidationTable();
// training_memory_reports.
const Table<MemoryRow, MemoryReport>& MemoryTable();

// Rows for `records` of `workload`, checked (their text sanitised); the
// rows point into `records`.
template <typename T>
StatusOr<std::vector<StoredRow<T>>> CheckedRows(
    const Table<StoredRow<T>, T>& table, std::span<const T> records,
    std::string_view workload) {
  std::vector<StoredRow<T>> rows(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    rows[i].record = &records[i];
    rows[i].workload = workload;
    LENS_RETURN_IF_ERROR(table.Check(&rows[i]));
  }
  return rows;
}

// Sets each row's stored run from `runs` (local run -> stored run) and
// upserts the rows on `c`, inside the caller's transaction.
template <typename T>
Status UpsertStored(Conn& c, const Table<StoredRow<T>, T>& table,
                    std::span<StoredRow<T>> rows,
                    const std::unordered_map<int32_t, int32_t>& runs) {
  if (rows.empty()) return OkStatus();
  Scratch scratch;
  std::vector<std::vector<Param>> params(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].run = runs.at(rows[i].record->run);
    params[i].reserve(16);
    LENS_RETURN_IF_ERROR(table.AppendRow(rows[i], scratch, &params[i]));
  }
  return UpsertRows(c, table.upsert(), params).status();
}

}  // namespace lens::store

#endif  // LENS_STORE_TRAINING_TABLES_H_
