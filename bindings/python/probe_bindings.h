// lens.probe_* for Python. Internal to the `lens` module.
#ifndef LENS_BINDINGS_PYTHON_PROBE_BINDINGS_H_
#define LENS_BINDINGS_PYTHON_PROBE_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace lens::python {

// Registers probe_gpus, probe_rdma, probe_node and probe on `m`.
void BindProbes(pybind11::module_& m);

}  // namespace lens::python

#endif  // LENS_BINDINGS_PYTHON_PROBE_BINDINGS_H_
