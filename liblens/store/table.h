// One description per table: each column named once, bound to the record
// field it holds. The upsert's column list, the SELECT list, the checks a
// value passes before it is written and the mapping of a result row back to
// a record all come from it, so a column cannot be added to one and
// forgotten in another. Internal to liblens.
//
//   const store::Table<PodResourcesRecord>& Table() {
//     static const store::Table<PodResourcesRecord> t(
//         "pod_resources", 1,
//         {field::Key("pod_uid", &PodResourcesRecord::pod_uid),
//          field::Name("gpu_vendor", &PodResourcesRecord::gpu_vendor),
//          field::Time("updated_at", &PodResourcesRecord::updated_at)});
//     return t;
//   }
//   Table().Write(db, records);               // checks, then upserts
//   "SELECT " + Table().select() + " FROM pod_resources ..."
//   PodResourcesRecord r = Table().Read(rows, i);
#ifndef LENS_STORE_TABLE_H_
#define LENS_STORE_TABLE_H_

#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "lens/model.h"
#include "lens/status.h"
#include "store/db.h"
#include "store/text.h"

namespace lens::store {

// Text that a row's parameters point into (encoded labels, digests). A
// deque: adding to it never moves what earlier parameters point to.
using Scratch = std::deque<std::string>;

// A column of a table whose rows are written from a W and read back into an
// R: the same type, except where a written row is a record plus what the
// writer adds (the training tables: a parser record, its workload and the
// run it was stored as).
template <typename W, typename R = W>
struct Field {
  Column column;  // an empty name: a check only, neither written nor read
  // The parameter written for `w`; text it builds goes into `scratch`.
  std::function<StatusOr<Param>(std::string_view table, const W& w,
                                Scratch& scratch)>
      write;
  // Sets the field from a result cell; empty for a column only written.
  std::function<void(const Rows& rows, size_t row, size_t col, R* r)> read;
  // Checks and normalises the value before it is written; may be empty.
  std::function<Status(std::string_view table, W* w)> check;
};

// Checked copies of records and their rows; the rows point into it.
template <typename R>
struct Batch {
  Batch() = default;
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  std::vector<R> records;
  Scratch scratch;
  std::vector<std::vector<Param>> rows;
};

// How an upsert treats a row that exists (see UpsertSpec).
struct OnConflict {
  std::vector<std::string_view> keep;          // never updated
  std::vector<std::string_view> keep_if_null;  // kept when the new is NULL
  bool do_nothing = false;
};

template <typename W, typename R = W>
class Table {
 public:
  // The first `key_columns` fields written are the key.
  Table(std::string_view name, size_t key_columns,
        std::vector<Field<W, R>> fields, OnConflict on_conflict = {})
      : name_(name),
        key_columns_(key_columns),
        fields_(std::move(fields)),
        on_conflict_(std::move(on_conflict)) {
    for (const Field<W, R>& f : fields_) {
      if (f.column.name.empty()) continue;
      if (f.write) columns_.push_back(f.column);
      if (!f.read) continue;
      if (!select_.empty()) select_ += ", ";
      select_ += f.column.kind == ColumnKind::kTimestamp
                     ? "lens_us(" + std::string(f.column.name) + ")"
                     : std::string(f.column.name);
      ++read_columns_;
    }
  }

  std::string_view name() const { return name_; }
  // The columns Read takes, in its order ("a, lens_us(b), ...").
  const std::string& select() const { return select_; }
  size_t read_columns() const { return read_columns_; }

  UpsertSpec upsert() const {
    return {name_,
            columns_,
            key_columns_,
            on_conflict_.keep,
            on_conflict_.do_nothing,
            on_conflict_.keep_if_null};
  }

  // Runs every field's check on `*w` (sanitising its text).
  Status Check(W* w) const {
    for (const Field<W, R>& f : fields_) {
      if (f.check) LENS_RETURN_IF_ERROR(f.check(name_, w));
    }
    return OkStatus();
  }

  // Appends the parameters of an already checked `w` to `row`.
  Status AppendRow(const W& w, Scratch& scratch,
                   std::vector<Param>* row) const {
    for (const Field<W, R>& f : fields_) {
      if (f.column.name.empty() || !f.write) continue;
      LENS_ASSIGN_OR_RETURN(Param p, f.write(name_, w, scratch));
      row->push_back(p);
    }
    return OkStatus();
  }

  // Checks copies of `records` and builds their rows into `*batch`.
  Status Prepare(std::span<const W> records, Batch<W>* batch) const {
    batch->records.assign(records.begin(), records.end());
    for (W& w : batch->records) LENS_RETURN_IF_ERROR(Check(&w));
    batch->rows.reserve(batch->records.size());
    for (const W& r : batch->records) {
      batch->rows.emplace_back();
      batch->rows.back().reserve(columns_.size());
      LENS_RETURN_IF_ERROR(AppendRow(r, batch->scratch, &batch->rows.back()));
    }
    return OkStatus();
  }

  // Prepare, then upsert the rows in one write transaction.
  Status Write(Database& db, std::span<const W> records) const {
    Batch<W> batch;
    LENS_RETURN_IF_ERROR(Prepare(records, &batch));
    return WriteRows(db, upsert(), batch.rows);
  }

  // The record in row `row` of `rows`, read from select()'s columns starting
  // at column `first`.
  R Read(const Rows& rows, size_t row, size_t first = 0) const {
    R r{};
    size_t col = first;
    for (const Field<W, R>& f : fields_) {
      if (f.column.name.empty() || !f.read) continue;
      f.read(rows, row, col++, &r);
    }
    return r;
  }

  // Every row of `rows`, read.
  std::vector<R> ReadAll(const Rows& rows) const {
    std::vector<R> out;
    out.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) out.push_back(Read(rows, i));
    return out;
  }

 private:
  std::string_view name_;
  size_t key_columns_;
  std::vector<Field<W, R>> fields_;
  OnConflict on_conflict_;
  std::vector<Column> columns_;
  std::string select_;
  size_t read_columns_ = 0;
};

// Field builders for the common column shapes.
namespace field {

// Text of at most `max_bytes`, sanitised; may be empty.
template <typename R>
Field<R> Text(std::string_view name, std::string R::*m,
              size_t max_bytes = kMaxTextBytes) {
  return {{name},
          [m](std::string_view, const R& r, Scratch&) -> StatusOr<Param> {
            return Param(std::string_view(r.*m));
          },
          [m](const Rows& rows, size_t i, size_t c, R* r) {
            r->*m = rows.Text(i, c);
          },
          [name, m, max_bytes](std::string_view t, R* r) {
            return CheckText(t, name, &(r->*m), max_bytes);
          }};
}

// A name, uid or short enum text: at most kMaxKeyBytes; may be empty.
template <typename R>
Field<R> Name(std::string_view name, std::string R::*m) {
  return Text(name, m, kMaxKeyBytes);
}

// Like Name, but must not be empty (a key).
template <typename R>
Field<R> Key(std::string_view name, std::string R::*m) {
  Field<R> f = Name(name, m);
  f.check = [name, m](std::string_view t, R* r) {
    return CheckKey(t, name, &(r->*m));
  };
  return f;
}

// A JSON object or array as text, validated, at most `max_bytes`.
template <typename R>
Field<R> Json(std::string_view name, std::string R::*m,
              size_t max_bytes = kMaxLabelsBytes) {
  Field<R> f = Text(name, m, max_bytes);
  f.column.kind = ColumnKind::kJson;
  f.check = [name, m, max_bytes](std::string_view t, R* r) {
    return CheckJson(t, name, &(r->*m), max_bytes);
  };
  return f;
}

// Labels, as a JSON object of strings.
template <typename R>
Field<R> LabelsColumn(std::string_view name, Labels R::*m) {
  return {
      {name, ColumnKind::kJson},
      [m](std::string_view t, const R& r, Scratch& scratch) -> StatusOr<Param> {
        LENS_ASSIGN_OR_RETURN(std::string json, store::LabelsColumn(t, r.*m));
        scratch.push_back(std::move(json));
        return Param(std::string_view(scratch.back()));
      },
      [m](const Rows& rows, size_t i, size_t c, R* r) {
        r->*m = ReadLabels(rows.Text(i, c));
      },
      nullptr};
}

// An integer (int32_t or int64_t).
template <typename R, typename I>
Field<R> Int(std::string_view name, I R::*m) {
  return {{name},
          [m](std::string_view, const R& r, Scratch&) -> StatusOr<Param> {
            return Param(int64_t{r.*m});
          },
          [m](const Rows& rows, size_t i, size_t c, R* r) {
            r->*m = static_cast<I>(rows.Int(i, c));
          },
          nullptr};
}

// An optional integer: NULL when unset.
template <typename R, typename I>
Field<R> OptInt(std::string_view name, std::optional<I> R::*m) {
  return {{name},
          [m](std::string_view, const R& r, Scratch&) -> StatusOr<Param> {
            return r.*m ? Param(int64_t{*(r.*m)}) : Param();
          },
          [m](const Rows& rows, size_t i, size_t c, R* r) {
            if (!rows.IsNull(i, c)) r->*m = static_cast<I>(rows.Int(i, c));
          },
          nullptr};
}

template <typename R>
Field<R> Bool(std::string_view name, bool R::*m) {
  return {{name},
          [m](std::string_view, const R& r, Scratch&) -> StatusOr<Param> {
            return Param(r.*m);
          },
          [m](const Rows& rows, size_t i, size_t c, R* r) {
            r->*m = rows.Bool(i, c);
          },
          nullptr};
}

// A timestamp that must be set (the original wrote zero times).
template <typename R>
Field<R> Time(std::string_view name, Timestamp R::*m) {
  return {{name, ColumnKind::kTimestamp},
          [m](std::string_view, const R& r, Scratch&) -> StatusOr<Param> {
            return Param(Us(r.*m));
          },
          [m](const Rows& rows, size_t i, size_t c, R* r) {
            r->*m = FromUs(rows.Int(i, c));
          },
          [name, m](std::string_view t, R* r) {
            return CheckTime(t, name, r->*m);
          }};
}

// A creation time: `updated` must be set and an unset creation time
// becomes it (a writer that does not know when the row was created).
template <typename R>
Field<R> CreatedAt(std::string_view name, Timestamp R::*m,
                   Timestamp R::*updated) {
  Field<R> f = Time(name, m);
  f.check = [m, updated](std::string_view t, R* r) {
    return CheckTimes(t, &(r->*m), r->*updated);
  };
  return f;
}

// A timestamp that may be unset: NULL.
template <typename R>
Field<R> OptTime(std::string_view name, std::optional<Timestamp> R::*m) {
  return {{name, ColumnKind::kTimestamp},
          [m](std::string_view, const R& r, Scratch&) -> StatusOr<Param> {
            return OptUs(r.*m);
          },
          [m](const Rows& rows, size_t i, size_t c, R* r) {
            if (!rows.IsNull(i, c)) r->*m = FromUs(rows.Int(i, c));
          },
          nullptr};
}

// An optional real number: NULL when unset or not finite.
template <typename R>
Field<R> OptReal(std::string_view name, std::optional<double> R::*m) {
  return {{name},
          [m](std::string_view, const R& r, Scratch&) -> StatusOr<Param> {
            return Finite(r.*m);
          },
          [m](const Rows& rows, size_t i, size_t c, R* r) {
            if (!rows.IsNull(i, c)) r->*m = rows.Double(i, c);
          },
          nullptr};
}

// An enum stored as its text, `text(value)`, read back through `parse`.
template <typename R, typename E>
Field<R> Enum(std::string_view name, E R::*m, E (*parse)(std::string_view),
              std::string_view (*text)(std::type_identity_t<E>)) {
  return {{name},
          [m, text](std::string_view, const R& r, Scratch&) -> StatusOr<Param> {
            return Param(text(r.*m));
          },
          [m, parse](const Rows& rows, size_t i, size_t c, R* r) {
            r->*m = parse(rows.Text(i, c));
          },
          nullptr};
}

// The same with lens::ToString for the text.
template <typename R, typename E>
Field<R> Enum(std::string_view name, E R::*m, E (*parse)(std::string_view)) {
  return Enum<R, E>(name, m, parse, [](E e) { return ToString(e); });
}

// A column from a projection of the written row and a setter of the read
// record (rows whose written type is not the read type).
template <typename W, typename R>
Field<W, R> Of(
    Column column, std::function<Param(const W& w)> write,
    std::function<void(const Rows& rows, size_t row, size_t col, R* r)> read =
        nullptr) {
  return {column,
          [write = std::move(write)](std::string_view, const W& w, Scratch&)
              -> StatusOr<Param> { return write(w); },
          std::move(read), nullptr};
}

// written_us, the change feed's column: the writing transaction's time
// (Conn::write_time_us), put in by UpsertRows; never read into the record
// (the feed reads it beside the record's columns).
template <typename R>
Field<R> WrittenUs() {
  return {{"written_us", ColumnKind::kWrittenUs},
          [](std::string_view, const R&, Scratch&) -> StatusOr<Param> {
            return Param();
          },
          nullptr,
          nullptr};
}

// A check of the whole record that no single column owns.
template <typename R>
Field<R> Rule(std::function<Status(std::string_view table, R* r)> check) {
  return {{}, nullptr, nullptr, std::move(check)};
}

}  // namespace field
}  // namespace lens::store

#endif  // LENS_STORE_TABLE_H_
