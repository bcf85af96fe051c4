#include "training_types.h"

#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace py = pybind11;

namespace lens::python {
namespace {

// A typed field as Python sees it: int for integer fields (as the JSON output
// prints them), float otherwise and for non-finite or out-of-range values.
py::object FieldValue(double v, bool integer) {
  if (integer && std::isfinite(v) && std::fabs(v) < 9.0e15 &&
      v == std::floor(v)) {
    return py::int_(static_cast<int64_t>(v));
  }
  return py::float_(v);
}

py::object FieldOrNone(const IterationRecord& r, const IterationFieldInfo& f) {
  std::optional<double> v = r.Get(f.field);
  return v ? FieldValue(*v, f.integer) : py::none();
}

py::str Str(std::string_view s) { return DecodeLossy(s); }

py::dict Extra(const IterationRecord& r) {
  py::dict d;
  for (const auto& [key, value] : r.extra) d[Str(key)] = value;
  return d;
}

template <typename T>
void SetIf(py::dict& d, const char* key, const std::optional<T>& v) {
  if (v) d[key] = *v;
}

std::string Repr(const IterationRecord& r) {
  std::string out = "IterationRecord(run=" + std::to_string(r.run) +
                    ", iteration=" + std::to_string(r.iteration) +
                    ", format='" + std::string(TrainingFormatName(r.format)) +
                    "'";
  for (const IterationFieldInfo& f : IterationFields()) {
    if (!r.Has(f.field)) continue;
    out += ", " + std::string(f.name) + "=";
    out += py::repr(FieldOrNone(r, f)).cast<std::string>();
  }
  return out + ")";
}

void BindIterationRecord(py::module_& m) {
  py::class_<IterationRecord> cls(m, "IterationRecord", R"doc(
One parsed iteration line (or two merged lines of one step). Every typed field is a read-only
attribute that is None when the line did not print it; lens.iteration_fields() lists them with
their units. Integer fields are int, the others float (nan and inf stay floats).)doc");
  cls.def_readonly("run", &IterationRecord::run,
                   "Run number (see TrainingLogParser).")
      .def_readonly("iteration", &IterationRecord::iteration,
                    "Step/iteration number the framework printed.")
      .def_readonly("line", &IterationRecord::line,
                    "1-based line number in the input.")
      .def_property_readonly(
          "format",
          [](const IterationRecord& r) {
            return Str(TrainingFormatName(r.format));
          },
          "Format family: 'megatron', 'primus', 'torchtitan', 'nemo', "
          "'hf_trainer', "
          "'deepspeed' or 'unknown'.")
      .def_readonly("timestamp", &IterationRecord::timestamp_s,
                    "Unix seconds from the line's CRI/log prefix, or None.")
      .def_readonly("rank", &IterationRecord::rank,
                    "Rank from the line prefix, or None.")
      .def_readonly("world_size", &IterationRecord::world_size,
                    "World size from a '[rank-i/n]' prefix, or None.")
      .def_property_readonly(
          "extra", &Extra,
          "Numeric fields without a typed name: {normalised key: float}.")
      .def("to_dict", py::overload_cast<const IterationRecord&>(&ToDict),
           "A plain dict with the keys of the JSON output; absent fields are "
           "left out.")
      .def("__repr__", &Repr);
  // One property per typed field, from the field table (names and help live
  // there only).
  for (const IterationFieldInfo& f : IterationFields()) {
    cls.def_property_readonly(
        std::string(f.name).c_str(),
        [f](const IterationRecord& r) { return FieldOrNone(r, f); },
        std::string(f.help).c_str());
  }
}

void BindTrainingEvent(py::module_& m) {
  py::class_<TrainingEvent>(
      m, "TrainingEvent",
      "A training start, checkpoint save start/end or training end.")
      .def_property_readonly(
          "type",
          [](const TrainingEvent& e) {
            return Str(TrainingEventTypeName(e.type));
          },
          "'training_start', 'checkpoint_save_start', 'checkpoint_save_end' or "
          "'training_end'.")
      .def_readonly("run", &TrainingEvent::run, "Run number.")
      .def_readonly("line", &TrainingEvent::line,
                    "1-based line number in the input.")
      .def_property_readonly(
          "format",
          [](const TrainingEvent& e) {
            return Str(TrainingFormatName(e.format));
          },
          "Format family the line was recognised in.")
      .def_readonly("iteration", &TrainingEvent::iteration,
                    "Checkpoint iteration/step, or None.")
      .def_readonly("timestamp", &TrainingEvent::timestamp_s,
                    "Unix seconds from the line's prefix, or None.")
      .def_readonly("duration_s", &TrainingEvent::duration_s,
                    "Checkpoint save duration in seconds, or None.")
      .def_property_readonly(
          "path",
          [](const TrainingEvent& e) -> py::object {
            return e.path.empty() ? py::object(py::none())
                                  : py::object(Str(e.path));
          },
          "Checkpoint path, or None.")
      .def("to_dict", py::overload_cast<const TrainingEvent&>(&ToDict),
           "A plain dict with the keys of the JSON output; absent fields are "
           "left out.")
      .def("__repr__", [](const TrainingEvent& e) {
        return "TrainingEvent(" + py::repr(ToDict(e)).cast<std::string>() + ")";
      });
}

void BindStats(py::module_& m) {
  using S = TrainingParserStats;
  py::class_<S>(m, "TrainingParserStats", "Counters of what a parser saw.")
      .def_readonly("bytes", &S::bytes, "Input bytes.")
      .def_readonly("lines", &S::lines, "Input lines.")
      .def_readonly("records", &S::records,
                    "Iteration records emitted (after dedup).")
      .def_readonly("events", &S::events, "Events emitted.")
      .def_readonly("validations", &S::validations,
                    "Validation records emitted.")
      .def_readonly("memory_reports", &S::memory_reports,
                    "Memory reports emitted.")
      .def_readonly("duplicate_iterations", &S::duplicate_iterations,
                    "Repeated iterations dropped or merged.")
      .def_readonly("unparsed_candidates", &S::unparsed_candidates,
                    "Lines that look like metric lines but matched no format "
                    "(format drift).")
      .def_readonly("oversized_lines", &S::oversized_lines,
                    "Lines longer than max_line_bytes, skipped.")
      .def_property_readonly(
          "unparsed_example",
          [](const S& s) { return Str(s.unparsed_example); },
          "The first unparsed candidate line (at most 512 bytes), or ''.")
      .def("to_dict", py::overload_cast<const S&>(&ToDict),
           "The counters as a dict.")
      .def("__repr__", [](const S& s) {
        return "TrainingParserStats(" +
               py::repr(ToDict(s)).cast<std::string>() + ")";
      });
}

py::list RecordDicts(const TrainingLog& log) {
  py::list out(log.records.size());
  for (size_t i = 0; i < log.records.size(); ++i)
    out[i] = ToDict(log.records[i]);
  return out;
}

void BindTrainingLog(py::module_& m) {
  py::class_<TrainingLog>(m, "TrainingLog",
                          "A whole parsed log: records, events and stats.")
      .def_readonly("records", &TrainingLog::records,
                    "List of IterationRecord in input order (a new list of "
                    "copies per access).")
      .def_readonly("events", &TrainingLog::events,
                    "List of TrainingEvent in input order (a new list of "
                    "copies per access).")
      .def_readonly("validations", &TrainingLog::validations,
                    "List of ValidationRecord in input order.")
      .def_readonly("memory_reports", &TrainingLog::memory_reports,
                    "List of MemoryReport in input order.")
      .def_readonly("stats", &TrainingLog::stats,
                    "TrainingParserStats of the parse.")
      .def("records_as_dicts", &RecordDicts,
           "Every record as IterationRecord.to_dict(), e.g. for "
           "pandas.DataFrame(log.records_as_dicts()).")
      .def(
          "summaries",
          [](const TrainingLog& log) {
            py::list out;
            for (const RunSummary& s : SummarizeTrainingLog(log))
              out.append(ToDict(s));
            return out;
          },
          "Per-run summaries (dicts with the keys of the JSON run_summary), "
          "ordered by run.")
      .def(
          "format_summary",
          [](const TrainingLog& log) {
            return FormatSummary(SummarizeTrainingLog(log), log.stats);
          },
          "The human-readable summary that `lens parse-log` prints.")
      .def("__repr__", [](const TrainingLog& log) {
        return "TrainingLog(records=" + std::to_string(log.records.size()) +
               ", events=" + std::to_string(log.events.size()) + ")";
      });
}

}  // namespace

py::str DecodeLossy(std::string_view text) {
  PyObject* o = PyUnicode_DecodeUTF8(
      text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (o == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

py::dict ToDict(const IterationRecord& r) {
  py::dict d;
  d["type"] = "iteration";
  d["run"] = r.run;
  d["iteration"] = r.iteration;
  d["line"] = r.line;
  d["format"] = Str(TrainingFormatName(r.format));
  SetIf(d, "timestamp", r.timestamp_s);
  SetIf(d, "rank", r.rank);
  SetIf(d, "world_size", r.world_size);
  for (const IterationFieldInfo& f : IterationFields()) {
    if (r.Has(f.field)) d[Str(f.name)] = FieldOrNone(r, f);
  }
  if (!r.extra.empty()) d["extra"] = Extra(r);
  return d;
}

py::dict ToDict(const TrainingEvent& e) {
  py::dict d;
  d["type"] = Str(TrainingEventTypeName(e.type));
  d["run"] = e.run;
  d["line"] = e.line;
  d["format"] = Str(TrainingFormatName(e.format));
  SetIf(d, "iteration", e.iteration);
  SetIf(d, "timestamp", e.timestamp_s);
  SetIf(d, "duration_s", e.duration_s);
  if (!e.path.empty()) d["path"] = Str(e.path);
  return d;
}

py::dict ToDict(const RunSummary& s) {
  py::dict d;
  d["type"] = "run_summary";
  d["run"] = s.run;
  d["format"] = Str(TrainingFormatName(s.format));
  d["iterations"] = s.iterations;
  SetIf(d, "first_iteration", s.first_iteration);
  SetIf(d, "last_iteration", s.last_iteration);
  SetIf(d, "target_iteration", s.target_iteration);
  SetIf(d, "step_ms_p10", s.step_ms_p10);
  SetIf(d, "step_ms_p50", s.step_ms_p50);
  SetIf(d, "step_ms_p90", s.step_ms_p90);
  SetIf(d, "tflops_per_gpu_p50", s.tflops_per_gpu_p50);
  SetIf(d, "tokens_per_s_per_gpu_p50", s.tokens_per_s_per_gpu_p50);
  SetIf(d, "first_loss", s.first_loss);
  SetIf(d, "last_loss", s.last_loss);
  d["nan_loss_records"] = s.nan_loss_records;
  d["nan_iterations"] = s.nan_iterations;
  d["skipped_iterations"] = s.skipped_iterations;
  d["checkpoints"] = s.checkpoints;
  d["validations"] = s.validations;
  SetIf(d, "last_validation_iteration", s.last_validation_iteration);
  SetIf(d, "last_validation_loss", s.last_validation_loss);
  d["ended"] = s.ended;
  return d;
}

py::dict ToDict(const TrainingParserStats& s) {
  py::dict d;
  d["bytes"] = s.bytes;
  d["lines"] = s.lines;
  d["records"] = s.records;
  d["events"] = s.events;
  d["validations"] = s.validations;
  d["memory_reports"] = s.memory_reports;
  d["duplicate_iterations"] = s.duplicate_iterations;
  d["unparsed_candidates"] = s.unparsed_candidates;
  d["oversized_lines"] = s.oversized_lines;
  d["unparsed_example"] = Str(s.unparsed_example);
  return d;
}

void BindTrainingTypes(py::module_& m) {
  BindIterationRecord(m);
  BindTrainingEvent(m);
  BindEvaluationTypes(m);
  BindStats(m);
  BindTrainingLog(m);
}

}  // namespace lens::python
