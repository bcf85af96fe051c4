// lens.watch_flows for Python. Internal to the `lens` module.
#ifndef LENS_BINDINGS_PYTHON_FLOW_BINDINGS_H_
#define LENS_BINDINGS_PYTHON_FLOW_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace lens::python {

// Registers watch_flows on `m`.
void BindFlows(pybind11::module_& m);

}  // namespace lens::python

#endif  // LENS_BINDINGS_PYTHON_FLOW_BINDINGS_H_
