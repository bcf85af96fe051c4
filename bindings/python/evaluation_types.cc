// Python classes for ValidationRecord and MemoryReport (lens/training.h).
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "training_types.h"

namespace py = pybind11;

namespace lens::python {
namespace {

template <typename T>
void SetIf(py::dict& d, const char* key, const std::optional<T>& v) {
  if (v) d[key] = *v;
}

py::str FormatOf(TrainingFormat f) {
  return DecodeLossy(TrainingFormatName(f));
}

py::dict Extra(const ValidationRecord& v) {
  py::dict extra;
  for (const auto& [key, value] : v.extra) extra[DecodeLossy(key)] = value;
  return extra;
}

}  // namespace

py::dict ToDict(const ValidationRecord& v) {
  py::dict d;
  d["type"] = "validation";
  d["run"] = v.run;
  d["line"] = v.line;
  d["format"] = FormatOf(v.format);
  d["iteration"] = v.iteration;
  SetIf(d, "timestamp", v.timestamp_s);
  d["split"] = DecodeLossy(EvaluationSplitName(v.split));
  if (v.end_of_training) d["end_of_training"] = true;
  SetIf(d, "loss", v.loss);
  SetIf(d, "perplexity", v.perplexity);
  if (!v.extra.empty()) d["extra"] = Extra(v);
  return d;
}

py::dict ToDict(const MemoryReport& m) {
  py::dict d;
  d["type"] = "memory_report";
  d["run"] = m.run;
  d["line"] = m.line;
  d["format"] = FormatOf(m.format);
  SetIf(d, "iteration", m.iteration);
  SetIf(d, "timestamp", m.timestamp_s);
  d["rank"] = m.rank;
  d["context"] = DecodeLossy(m.context);
  SetIf(d, "allocated_mb", m.allocated_mb);
  SetIf(d, "max_allocated_mb", m.max_allocated_mb);
  SetIf(d, "reserved_mb", m.reserved_mb);
  SetIf(d, "max_reserved_mb", m.max_reserved_mb);
  return d;
}

void BindEvaluationTypes(py::module_& m) {
  using V = ValidationRecord;
  py::class_<V>(m, "ValidationRecord",
                "A validation or test evaluation the log printed (Megatron, "
                "TorchTitan, Lightning, HF Trainer).")
      .def_readonly("run", &V::run, "Run number.")
      .def_readonly("iteration", &V::iteration,
                    "Training iteration evaluated (printed, else the run's "
                    "latest).")
      .def_readonly("line", &V::line, "1-based line number in the input.")
      .def_property_readonly(
          "format", [](const V& v) { return FormatOf(v.format); },
          "Format family the line was recognised in.")
      .def_readonly("timestamp", &V::timestamp_s,
                    "Unix seconds from the line's prefix, or None.")
      .def_property_readonly(
          "split",
          [](const V& v) { return DecodeLossy(EvaluationSplitName(v.split)); },
          "'validation' or 'test'.")
      .def_readonly("end_of_training", &V::end_of_training,
                    "True for the evaluation after training ended.")
      .def_readonly("loss", &V::loss, "Language-model loss, or None.")
      .def_readonly("perplexity", &V::perplexity,
                    "Perplexity as printed, or None.")
      .def_property_readonly("extra", &Extra,
                             "Other printed values by normalised name.")
      .def("to_dict", py::overload_cast<const V&>(&ToDict),
           "A plain dict with the keys of the JSON output.")
      .def("__repr__", [](const V& v) {
        return "ValidationRecord(" + py::repr(ToDict(v)).cast<std::string>() +
               ")";
      });

  using R = MemoryReport;
  py::class_<R>(m, "MemoryReport",
                "Megatron's per-rank device memory report (MiB as printed).")
      .def_readonly("run", &R::run, "Run number.")
      .def_readonly("iteration", &R::iteration,
                    "Iteration the report follows, or None.")
      .def_readonly("line", &R::line, "1-based line number in the input.")
      .def_property_readonly(
          "format", [](const R& r) { return FormatOf(r.format); },
          "Format family.")
      .def_readonly("timestamp", &R::timestamp_s,
                    "Unix seconds from the line's prefix, or None.")
      .def_readonly("rank", &R::rank, "Global rank that printed it.")
      .def_property_readonly(
          "context", [](const R& r) { return DecodeLossy(r.context); },
          "What it follows: 'after 10 iterations', 'before save_checkpoint "
          "for iteration 200'.")
      .def_readonly("allocated_mb", &R::allocated_mb, "Allocated MiB.")
      .def_readonly("max_allocated_mb", &R::max_allocated_mb,
                    "Peak allocated MiB.")
      .def_readonly("reserved_mb", &R::reserved_mb, "Reserved MiB.")
      .def_readonly("max_reserved_mb", &R::max_reserved_mb,
                    "Peak reserved MiB.")
      .def("to_dict", py::overload_cast<const R&>(&ToDict),
           "A plain dict with the keys of the JSON output.")
      .def("__repr__", [](const R& r) {
        return "MemoryReport(" + py::repr(ToDict(r)).cast<std::string>() + ")";
      });
}

}  // namespace lens::python
