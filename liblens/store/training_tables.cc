#include "store/training_tables.h"

#include <optional>
#include <utility>

#include "store/training_codec.h"

namespace lens::store {
namespace {

template <typename T>
using F = Field<StoredRow<T>, T>;

std::optional<double> Seconds(const Rows& r, size_t i, size_t c) {
  if (r.IsNull(i, c)) return std::nullopt;
  return static_cast<double>(r.Int(i, c)) / 1e6;
}

std::optional<double> OptDouble(const Rows& r, size_t i, size_t c) {
  if (r.IsNull(i, c)) return std::nullopt;
  return r.Double(i, c);
}

template <typename T>
F<T> Workload() {
  return field::Of<StoredRow<T>, T>(
      {"workload_uid"},
      [](const StoredRow<T>& w) { return Param(w.workload); });
}

template <typename T>
F<T> Run() {
  return field::Of<StoredRow<T>, T>(
      {"run"}, [](const StoredRow<T>& w) { return Param(w.run); },
      [](const Rows& r, size_t i, size_t c, T* out) {
        out->run = static_cast<int32_t>(r.Int(i, c));
      });
}

// An integer member of the record (int32_t, int64_t, uint64_t).
template <typename T, typename I>
F<T> Int(std::string_view name, I T::*m) {
  return field::Of<StoredRow<T>, T>(
      {name},
      [m](const StoredRow<T>& w) {
        return Param(static_cast<int64_t>(w.record->*m));
      },
      [m](const Rows& r, size_t i, size_t c, T* out) {
        out->*m = static_cast<I>(r.Int(i, c));
      });
}

// An optional integer member: NULL when unset.
template <typename T, typename I>
F<T> OptInt(std::string_view name, std::optional<I> T::*m) {
  return field::Of<StoredRow<T>, T>(
      {name},
      [m](const StoredRow<T>& w) {
        const std::optional<I>& v = w.record->*m;
        return v ? Param(static_cast<int64_t>(*v)) : Param();
      },
      [m](const Rows& r, size_t i, size_t c, T* out) {
        if (!r.IsNull(i, c)) out->*m = static_cast<I>(r.Int(i, c));
      });
}

// An optional double member: NULL when unset or not finite.
template <typename T>
F<T> OptDoubleOf(std::string_view name, std::optional<double> T::*m) {
  return field::Of<StoredRow<T>, T>(
      {name}, [m](const StoredRow<T>& w) { return Finite(w.record->*m); },
      [m](const Rows& r, size_t i, size_t c, T* out) {
        out->*m = OptDouble(r, i, c);
      });
}

// The record's time (Unix seconds) as a timestamp column.
template <typename T>
F<T> Time(std::string_view name) {
  return field::Of<StoredRow<T>, T>(
      {name, ColumnKind::kTimestamp},
      [](const StoredRow<T>& w) {
        const std::optional<int64_t> us = TimeUs(w.record->timestamp_s);
        return us ? Param(*us) : Param();
      },
      [](const Rows& r, size_t i, size_t c, T* out) {
        out->timestamp_s = Seconds(r, i, c);
      });
}

template <typename T>
F<T> Format() {
  return field::Of<StoredRow<T>, T>(
      {"format"},
      [](const StoredRow<T>& w) {
        return Param(TrainingFormatName(w.record->format));
      },
      [](const Rows& r, size_t i, size_t c, T* out) {
        out->format = FormatFromName(r.Text(i, c));
      });
}

// The row's own text (a sanitised copy of a record member) in `name`.
template <typename T>
F<T> OwnedText(std::string_view name, std::string T::*m, size_t max_bytes) {
  F<T> f = field::Of<StoredRow<T>, T>(
      {name}, [](const StoredRow<T>& w) { return Param(w.text); },
      [m](const Rows& r, size_t i, size_t c, T* out) {
        out->*m = r.Text(i, c);
      });
  f.check = [name, m, max_bytes](std::string_view t, StoredRow<T>* w) {
    w->text = w->record->*m;
    return CheckText(t, name, &w->text, max_bytes);
  };
  return f;
}

// A typed copy of one of an iteration's fields, for filtering and sorting
// (the record is read back from `fields`).
F<IterationRecord> Typed(std::string_view name, IterationField field) {
  return field::Of<IterationRow, IterationRecord>(
      {name},
      [field](const IterationRow& w) { return Finite(w.record->Get(field)); });
}

}  // namespace

const Table<IterationRow, IterationRecord>& IterationTable() {
  using T = IterationRecord;
  F<T> fields{{"fields", ColumnKind::kJson},
              [](std::string_view, const IterationRow& w,
                 Scratch& scratch) -> StatusOr<Param> {
                scratch.push_back(FieldsJson(*w.record));
                return Param(std::string_view(scratch.back()));
              },
              [](const Rows& r, size_t i, size_t c, T* out) {
                ReadFields(r.Text(i, c), out);
              },
              [](std::string_view t, IterationRow* w) -> Status {
                for (const auto& [k, v] : w->record->extra) {
                  if (k.empty() || k.size() > 128) {
                    return InvalidArgumentError(
                        std::string(t) + ".fields: extra field name of " +
                        std::to_string(k.size()) +
                        " bytes (must be 1..128) at iteration " +
                        std::to_string(w->record->iteration));
                  }
                }
                if (w->record->extra.size() > 256) {
                  return InvalidArgumentError(
                      std::string(t) +
                      ".fields: more than 256 extra fields at iteration " +
                      std::to_string(w->record->iteration));
                }
                return OkStatus();
              }};
  static const Table<IterationRow, T> t(
      "training_performance", 3,
      {Workload<T>(), Run<T>(), Int("iteration", &T::iteration), Time<T>("ts"),
       Format<T>(), OptInt("rank", &T::rank),
       OptInt("world_size", &T::world_size), Int("line", &T::line),
       Typed("loss", IterationField::kLoss),
       Typed("tflops_per_gpu", IterationField::kTflopsPerGpu),
       Typed("tokens_per_s_per_gpu", IterationField::kTokensPerSPerGpu),
       Typed("elapsed_ms", IterationField::kElapsedMs), std::move(fields)});
  return t;
}

const Table<EventRow, TrainingEvent>& EventTable() {
  using T = TrainingEvent;
  F<T> type = field::Of<EventRow, T>(
      {"event_type"},
      [](const EventRow& w) {
        return Param(TrainingEventTypeName(w.record->type));
      },
      [](const Rows& r, size_t i, size_t c, T* out) {
        out->type = EventTypeFromName(r.Text(i, c));
      });
  // The event's part of its key: "iteration:path" for checkpoints.
  F<T> key{{"event_key"},
           [](std::string_view, const EventRow& w,
              Scratch& scratch) -> StatusOr<Param> {
             scratch.emplace_back();
             return Param(EventKey(*w.record, &scratch.back()));
           },
           nullptr,
           nullptr};
  static const Table<EventRow, T> t(
      "workload_events", 4,
      {Workload<T>(), Run<T>(), std::move(type), std::move(key),
       OptInt("iteration", &T::iteration), Time<T>("at"),
       OptDoubleOf("duration_s", &T::duration_s),
       OwnedText("path", &T::path, kMaxTextBytes), Format<T>(),
       Int("line", &T::line)});
  return t;
}

const Table<ValidationRow, ValidationRecord>& ValidationTable() {
  using T = ValidationRecord;
  F<T> split = field::Of<ValidationRow, T>(
      {"split"},
      [](const ValidationRow& w) {
        return Param(EvaluationSplitName(w.record->split));
      },
      [](const Rows& r, size_t i, size_t c, T* out) {
        out->split = r.Text(i, c) == "test" ? EvaluationSplit::kTest
                                            : EvaluationSplit::kValidation;
      });
  F<T> end = field::Of<ValidationRow, T>(
      {"end_of_training"},
      [](const ValidationRow& w) { return Param(w.record->end_of_training); },
      [](const Rows& r, size_t i, size_t c, T* out) {
        out->end_of_training = r.Bool(i, c);
      });
  F<T> extra{{"extra", ColumnKind::kJson},
             [](std::string_view, const ValidationRow& w,
                Scratch& scratch) -> StatusOr<Param> {
               scratch.push_back(ExtraJson(w.record->extra));
               return Param(std::string_view(scratch.back()));
             },
             [](const Rows& r, size_t i, size_t c, T* out) {
               ReadExtra(r.Text(i, c), &out->extra);
             },
             nullptr};
  static const Table<ValidationRow, T> t(
      "training_validations", 5,
      {Workload<T>(), Run<T>(), Int("iteration", &T::iteration),
       std::move(split), std::move(end), Time<T>("ts"), Format<T>(),
       Int("line", &T::line), OptDoubleOf("loss", &T::loss),
       OptDoubleOf("perplexity", &T::perplexity), std::move(extra)});
  return t;
}

const Table<MemoryRow, MemoryReport>& MemoryTable() {
  using T = MemoryReport;
  static const Table<MemoryRow, T> t(
      "training_memory_reports", 4,
      {Workload<T>(), Run<T>(), Int("rank", &T::rank),
       OwnedText("context", &T::context, kMaxTextBytes),
       OptInt("iteration", &T::iteration), Time<T>("ts"), Format<T>(),
       Int("line", &T::line), OptDoubleOf("allocated_mb", &T::allocated_mb),
       OptDoubleOf("max_allocated_mb", &T::max_allocated_mb),
       OptDoubleOf("reserved_mb", &T::reserved_mb),
       OptDoubleOf("max_reserved_mb", &T::max_reserved_mb)});
  return t;
}

}  // namespace lens::store
