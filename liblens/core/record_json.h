// The JSON of a data-model record that more than one surface shows: one
// shape and one writer, so a field has one name everywhere. A container is
// written the same by the node REST API (/pods), `lens containers --json`
// and the REST API (/api/v1/nodes/{name}, /api/v1/containers):
//
//   {"containerId":"3f2a...","node":"gpu-node-1","podUid":"5d1c...",
//    "podName":"llama-0","podNamespace":"ml-team","name":"trainer",
//    "image":"registry.local/train:1","state":"running","privileged":false,
//    "exitCode":null,"createdAt":1763798400.123456,"startedAt":...,
//    "finishedAt":null,
//    "devices":[{"kind":"gpu","deviceKey":"PCB046982-0071",
//                "bdf":"0000:0c:00.0","source":"oci-spec"}],
//    "runtimeNamespace":"k8s.io","pid":41233,"updatedAt":...,
//    "labels":{"io.kubernetes.pod.name":"llama-0"}}
//
// The last four are what a node knows at first hand (ContainerJsonOptions::
// runtime_fields); the REST API, serving stored rows to anyone with its
// token, leaves them out. Never environment variables, mounts or the spec.
#ifndef LENS_CORE_RECORD_JSON_H_
#define LENS_CORE_RECORD_JSON_H_

#include "core/json.h"
#include "lens/model.h"

namespace lens {

struct ContainerJsonOptions {
  // runtimeNamespace, pid, updatedAt and labels.
  bool runtime_fields = true;
  // Times as Unix seconds with their microseconds (1763798400.123456, exact
  // as decimal text); false: whole seconds, as every time of the REST API.
  // An unknown time (optional and unset, or the epoch) is null either way.
  bool exact_times = true;
};

// Writes `c` as one JSON object. Text that is not valid UTF-8 (a record
// straight from a runtime may hold some) is written with U+FFFD in place
// of the bad bytes, so the output is always valid JSON.
void WriteContainerJson(JsonWriter& w, const ContainerRecord& c,
                        const ContainerJsonOptions& options = {});

}  // namespace lens

#endif  // LENS_CORE_RECORD_JSON_H_
