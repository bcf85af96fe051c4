// Python classes for the value types of lens/training.h (records, events,
// stats, parsed logs) and their conversion to plain dicts. Internal to the
// `lens` module.
#ifndef LENS_BINDINGS_PYTHON_TRAINING_TYPES_H_
#define LENS_BINDINGS_PYTHON_TRAINING_TYPES_H_

#include <pybind11/pybind11.h>

#include <string_view>

#include "lens/training.h"

namespace lens::python {

// Decodes UTF-8 with undecodable bytes as U+FFFD: log text and paths are not
// guaranteed UTF-8 and are cut at byte limits. Needs the GIL.
pybind11::str DecodeLossy(std::string_view text);

// Registers IterationRecord, TrainingEvent, TrainingParserStats and TrainingLog
// on `m`.
void BindTrainingTypes(pybind11::module_& m);

// The keys and values of the JSON output (AppendJson), present fields only;
// non-finite numbers stay floats (nan, inf) instead of JSON's strings. Needs
// the GIL.
pybind11::dict ToDict(const IterationRecord& record);
pybind11::dict ToDict(const TrainingEvent& event);
pybind11::dict ToDict(const RunSummary& summary);
pybind11::dict ToDict(const TrainingParserStats& stats);
pybind11::dict ToDict(const ValidationRecord& validation);
pybind11::dict ToDict(const MemoryReport& report);

// Registers ValidationRecord and MemoryReport on `m` (evaluation_types.cc).
void BindEvaluationTypes(pybind11::module_& m);

}  // namespace lens::python

#endif  // LENS_BINDINGS_PYTHON_TRAINING_TYPES_H_
