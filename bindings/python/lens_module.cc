// The `lens` Python module: training-log parsing from include/lens/training.h.
//
// Errors: a non-OK lens::Status becomes a Python exception in ThrowIfError()
// only. The GIL is released while parsing; a TrainingLogParser may be shared
// between threads (calls are serialised by its own mutex).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "errors.h"
#include "flow_bindings.h"
#include "lens/status.h"
#include "lens/training.h"
#include "lens/version.h"
#include "probe_bindings.h"
#include "store_bindings.h"
#include "training_types.h"

namespace py = pybind11;

namespace lens::python {
namespace {

// The exception classes, created once at import under the GIL. They are never
// released (as with pybind11's own register_exception), so nothing is freed
// after interpreter shutdown.
struct ExceptionTypes {
  py::handle base, not_found, permission_denied, invalid_argument;
};

ExceptionTypes& Exceptions() {
  static ExceptionTypes types;
  return types;
}

py::handle NewException(py::module_& m, const char* name, py::tuple bases,
                        const char* doc) {
  std::string qualified = "lens." + std::string(name);
  PyObject* type =
      PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.attr(name) =
      py::handle(type);  // the module takes a reference; ours is kept for good
  return type;
}

void RegisterExceptions(py::module_& m) {
  ExceptionTypes& t = Exceptions();
  py::handle exc(PyExc_Exception);
  t.base = NewException(
      m, "LensError", py::make_tuple(exc),
      "Base of Lens errors. `code` is the status code name, e.g. 'NOT_FOUND'.");
  t.not_found =
      NewException(m, "NotFoundError",
                   py::make_tuple(t.base, py::handle(PyExc_FileNotFoundError)),
                   "NOT_FOUND: a file (or what was asked for) does not exist.");
  t.permission_denied =
      NewException(m, "PermissionDeniedError",
                   py::make_tuple(t.base, py::handle(PyExc_PermissionError)),
                   "PERMISSION_DENIED: the file cannot be read.");
  t.invalid_argument =
      NewException(m, "InvalidArgumentError",
                   py::make_tuple(t.base, py::handle(PyExc_ValueError)),
                   "INVALID_ARGUMENT or OUT_OF_RANGE: bad input, e.g. a "
                   "directory where a file was expected.");
}

}  // namespace

// The one place where a Status becomes a Python exception (with the Status
// message and a `code` attribute). Needs the GIL.
void ThrowIfError(const Status& status, const std::string& filename) {
  if (status.ok()) return;
  const ExceptionTypes& t = Exceptions();
  py::handle type = t.base;
  switch (status.code()) {
    case StatusCode::kNotFound:
      type = t.not_found;
      break;
    case StatusCode::kPermissionDenied:
      type = t.permission_denied;
      break;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      type = t.invalid_argument;
      break;
    default:
      break;
  }
  py::object error = type(DecodeLossy(status.message()));
  error.attr("code") = std::string(StatusCodeName(status.code()));
  // The OSError fields.
  if (status.code() == StatusCode::kNotFound ||
      status.code() == StatusCode::kPermissionDenied) {
    const int err = status.code() == StatusCode::kNotFound ? ENOENT : EACCES;
    error.attr("errno") = err;
    // strerror is the Lens message, so str(error) keeps it:
    // "[Errno 2] <message>: '<filename>'".
    error.attr("strerror") = DecodeLossy(status.message());
    if (!filename.empty()) error.attr("filename") = filename;
  }
  PyErr_SetObject(type.ptr(), error.ptr());
  throw py::error_already_set();
}

namespace {

// A view of `text` that stays valid with the GIL released while `text` is
// alive: str (its UTF-8 form, cached by CPython) and bytes are immutable and
// viewed in place; other bytes-like objects (bytearray, memoryview, mmap) may
// change under a view, so they are copied to *copy.
std::string_view TextView(const py::handle& text, std::string* copy) {
  PyObject* o = text.ptr();
  if (PyUnicode_Check(o)) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(o, &size);
    if (data == nullptr) throw py::error_already_set();
    return {data, static_cast<size_t>(size)};
  }
  if (PyBytes_Check(o)) {
    return {PyBytes_AS_STRING(o), static_cast<size_t>(PyBytes_GET_SIZE(o))};
  }
  if (PyObject_CheckBuffer(o)) {
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) != 0)
      throw py::error_already_set();
    copy->assign(static_cast<const char*>(view.buf),
                 static_cast<size_t>(view.len));
    PyBuffer_Release(&view);
    return *copy;
  }
  throw py::type_error("expected str or a bytes-like object, got " +
                       std::string(Py_TYPE(o)->tp_name));
}

TrainingParserOptions Options(int32_t first_run, size_t max_line_bytes) {
  TrainingParserOptions options;
  options.first_run = first_run;
  options.max_line_bytes = max_line_bytes;
  return options;
}

TrainingLog ParseFile(const std::filesystem::path& path, int32_t first_run,
                      size_t max_line_bytes) {
  StatusOr<TrainingLog> log = [&] {
    py::gil_scoped_release release;
    return ParseTrainingLogFile(path.string(),
                                Options(first_run, max_line_bytes));
  }();
  ThrowIfError(log.status(), path.string());
  return std::move(log).value();
}

TrainingLog ParseText(const py::object& text, int32_t first_run,
                      size_t max_line_bytes) {
  std::string copy;
  std::string_view view = TextView(text, &copy);
  py::gil_scoped_release release;
  return ParseTrainingLog(view, Options(first_run, max_line_bytes));
}

// lens::TrainingLogParser for Python. Every call releases the GIL and then
// takes mu_, so threads sharing one parser are serialised and never wait for a
// lock while holding the GIL.
class Parser {
 public:
  Parser(int32_t first_run, size_t max_line_bytes)
      : parser_(Options(first_run, max_line_bytes)) {}

  void Feed(const py::object& chunk) {
    std::string copy;
    std::string_view view = TextView(chunk, &copy);
    Locked([&](TrainingLogParser& p) { p.Feed(view); });
  }
  void Finish() {
    Locked([](TrainingLogParser& p) { p.Finish(); });
  }
  void Flush() {
    Locked([](TrainingLogParser& p) { p.Flush(); });
  }
  std::vector<IterationRecord> TakeRecords() {
    return Locked([](TrainingLogParser& p) { return p.TakeRecords(); });
  }
  std::vector<TrainingEvent> TakeEvents() {
    return Locked([](TrainingLogParser& p) { return p.TakeEvents(); });
  }
  std::vector<ValidationRecord> TakeValidations() {
    return Locked([](TrainingLogParser& p) { return p.TakeValidations(); });
  }
  std::vector<MemoryReport> TakeMemoryReports() {
    return Locked([](TrainingLogParser& p) { return p.TakeMemoryReports(); });
  }
  TrainingParserStats Stats() {
    return Locked([](TrainingLogParser& p) { return p.stats(); });
  }
  int32_t CurrentRun() {
    return Locked([](TrainingLogParser& p) { return p.current_run(); });
  }

 private:
  // Runs f(parser_) with the GIL released and mu_ held.
  template <typename F>
  std::invoke_result_t<F, TrainingLogParser&> Locked(F&& f) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    return f(parser_);
  }

  std::mutex mu_;
  TrainingLogParser parser_;  // GUARDED_BY(mu_)
};

void BindParser(py::module_& m) {
  const size_t kDefaultMaxLine = TrainingParserOptions{}.max_line_bytes;
  py::class_<Parser>(m, "TrainingLogParser", R"doc(
Streaming training-log parser. feed() takes chunks split anywhere (also inside a line or a UTF-8
sequence); finish() ends the input and flushes a last unterminated line. Records and events
accumulate until taken. A record is emitted once its iteration is complete (the next iteration
line, a new run, flush() or finish()); events after it wait with it, so both come out in input
order. After flush(), a later line of the flushed iteration emits its record again, merged (an
upsert keyed by run and iteration). A run starts at each training start and whenever the iteration counter
goes backwards; runs are numbered from first_run. Lines longer than max_line_bytes (at least
4096) are counted in stats.oversized_lines and skipped.)doc")
      .def(py::init<int32_t, size_t>(), py::arg("first_run") = 1,
           py::arg("max_line_bytes") = kDefaultMaxLine)
      .def("feed", &Parser::Feed, py::arg("chunk"),
           "Parses a chunk: str, bytes or another bytes-like object "
           "(bytearray, memoryview).")
      .def("finish", &Parser::Finish,
           "Ends the input; flushes a last unterminated line.")
      .def("flush", &Parser::Flush,
           "Completes the open record now (for a live stream that went "
           "quiet); finish() implies it.")
      .def("take_records", &Parser::TakeRecords,
           "The IterationRecords completed since the last call, in input "
           "order.")
      .def("take_events", &Parser::TakeEvents,
           "The TrainingEvents parsed since the last call, in input order.")
      .def("take_validations", &Parser::TakeValidations,
           "The ValidationRecords parsed since the last call, in input order.")
      .def("take_memory_reports", &Parser::TakeMemoryReports,
           "The MemoryReports parsed since the last call, in input order.")
      .def_property_readonly("stats", &Parser::Stats,
                             "TrainingParserStats so far (a copy).")
      .def_property_readonly("current_run", &Parser::CurrentRun,
                             "The run the next record belongs to.");
}

}  // namespace
}  // namespace lens::python

PYBIND11_MODULE(lens, m) {
  namespace lp = lens::python;
  m.doc() =
      "Lens: training-log parsing (Megatron, Primus, TorchTitan, NeMo, HF "
      "Trainer, "
      "DeepSpeed) into typed per-iteration records, events and per-run "
      "summaries.";
  m.attr("__version__") = lens::Version();
  lp::RegisterExceptions(m);
  lp::BindTrainingTypes(m);
  lp::BindParser(m);
  lp::BindStore(m);
  lp::BindContainers(m);
  lp::BindInsights(m);
  lp::BindProbes(m);
  lp::BindFlows(m);

  const size_t kDefaultMaxLine = lens::TrainingParserOptions{}.max_line_bytes;
  m.def("parse_training_log", &lp::ParseFile, py::arg("path"),
        py::arg("first_run") = 1, py::arg("max_line_bytes") = kDefaultMaxLine,
        "Reads and parses a log file (str or os.PathLike) into a TrainingLog. "
        "Raises "
        "NotFoundError (a FileNotFoundError), PermissionDeniedError (a "
        "PermissionError) or "
        "InvalidArgumentError (a ValueError, e.g. for a directory) naming the "
        "path. The GIL "
        "is released while reading and parsing.");
  m.def("parse_training_text", &lp::ParseText, py::arg("text"),
        py::arg("first_run") = 1, py::arg("max_line_bytes") = kDefaultMaxLine,
        "Parses log text (str or bytes-like) into a TrainingLog. The GIL is "
        "released while "
        "parsing.");
  m.def(
      "iteration_fields",
      [] {
        std::vector<std::pair<std::string, std::string>> fields;
        for (const lens::IterationFieldInfo& f : lens::IterationFields()) {
          fields.emplace_back(f.name, f.help);
        }
        return fields;
      },
      "The typed iteration fields as (name, help) tuples, in declaration "
      "order; each name is "
      "an IterationRecord attribute and a to_dict()/JSON key.");
}
