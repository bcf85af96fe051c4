// lens.Store for Python: rows as plain dicts (store_dicts.cc) and the Store
// class (store_bindings.cc). Internal to the `lens` module; every function
// needs the GIL.
#ifndef LENS_BINDINGS_PYTHON_STORE_BINDINGS_H_
#define LENS_BINDINGS_PYTHON_STORE_BINDINGS_H_

#include <pybind11/pybind11.h>

#include <vector>

#include "lens/store.h"

namespace lens::python {

// Times become Unix seconds (float, None when unset); JSON columns become
// Python objects under the column name without "_json".
pybind11::dict ToDict(const NodeRecord& n);
pybind11::dict ToDict(const GpuDeviceRecord& g);
pybind11::dict ToDict(const RdmaDeviceRecord& d);
pybind11::dict ToDict(const DeviceChangeRecord& c);
pybind11::dict ToDict(const PodRecord& p);
pybind11::dict ToDict(const PodEventRecord& e);
pybind11::dict ToDict(const PodSnapshotRecord& s);
pybind11::dict ToDict(const PodResourcesRecord& r);
pybind11::dict ToDict(const WorkloadRecord& w);
pybind11::dict ToDict(const ContainerRecord& c);
pybind11::dict ToDict(const ContainerEventRecord& e);
pybind11::dict ToDict(const TrainingRunRecord& r);
pybind11::dict ToDict(const StorageRecord& s);
pybind11::dict ToDict(const SchemaStatus& s);

// Registers lens.Store on `m`.
void BindStore(pybind11::module_& m);
// Registers lens.containers(store, ...) (container_bindings.cc); after
// BindStore.
void BindContainers(pybind11::module_& m);
// Registers lens.goodput, lens.idle_gpus, lens.gpu_peaks and lens.gpu_peak
// (insight_bindings.cc); after BindStore.
void BindInsights(pybind11::module_& m);

}  // namespace lens::python

#endif  // LENS_BINDINGS_PYTHON_STORE_BINDINGS_H_
