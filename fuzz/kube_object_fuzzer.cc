// libFuzzer target for what the cluster side reads from other processes
// (built with LENS_BUILD_FUZZERS=ON and clang): the API server's watch event
// lines, list pages, and the pods, owners and nodes inside them; and a node
// agent's /report as lens-jobs decodes it.
//
// Input layout: byte 0 chooses the form (mod 3: 0 one watch event line, 1 a
// list body, 2 an agent report); the rest is what the peer sent. Besides
// crashes and UB, it checks the decoders' contracts: a report has at most
// 1024 devices of each kind, GPU indexes in 0..65535 and utilisations in
// 0..1; and it
// checks that the cheap cache filter never says "no
// GPUs" for a pod DecodePod finds GPUs in, an event's object decodes to the
// uid and name its metadata gave, and a decoded pod's requests are not
// negative.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "controller/kube_time.h"
#include "controller/node_model.h"
#include "controller/pod_model.h"
#include "controller/workload_model.h"
#include "kube/kube_json.h"
#include "scheduled/agents.h"

namespace {

void Fail(const char* what, std::string_view json) {
  std::fprintf(stderr, "kube_object_fuzzer: %s\n%.*s\n", what,
               static_cast<int>(std::min<size_t>(json.size(), 2000)),
               json.data());
  std::abort();
}

void CheckObject(const lens::KubeObject& object) {
  static const lens::controller::GpuResourceMatcher kGpus;
  const std::string& json = object.json;
  auto pod = lens::controller::DecodePod(json, kGpus);
  if (pod.ok()) {
    if (pod->uid != object.uid || pod->name != object.name) {
      Fail("DecodePod disagrees with the event's metadata", json);
    }
    if (pod->requests.gpus > 0 &&
        !lens::controller::MayRequestGpus(json, kGpus)) {
      Fail("MayRequestGpus said no GPUs for a pod that requests them", json);
    }
    if (pod->requests.gpus < 0 || pod->requests.rdma < 0 ||
        pod->requests.cpu_millis < 0 || pod->requests.memory_bytes < 0) {
      Fail("a negative request", json);
    }
  }
  (void)lens::controller::DecodeOwner(json);
  (void)lens::controller::DecodeNode(json, kGpus);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1,
                               size - 1);
  if (data[0] % 3 == 2) {
    auto report = lens::scheduled::ParseAgentReport(input);
    if (report.ok()) {
      if (report->gpus.size() > 1024 || report->rdma.size() > 1024) {
        Fail("more than 1024 devices accepted", input);
      }
      for (const lens::scheduled::AgentGpu& g : report->gpus) {
        if (g.device.gpu_index < 0 || g.device.gpu_index > 65535) {
          Fail("a GPU index out of range", input);
        }
        if (g.utilization_ratio &&
            !(*g.utilization_ratio >= 0 && *g.utilization_ratio <= 1)) {
          Fail("a utilisation outside 0..1", input);
        }
      }
    }
  } else if (data[0] % 3 == 0) {
    auto event = lens::ParseKubeWatchEvent(input, "fuzz");
    if (event.ok() && !event->object.json.empty()) CheckObject(event->object);
  } else {
    auto page = lens::ParseKubeList(input, "fuzz");
    if (page.ok()) {
      for (const lens::KubeObject& o : page->items) CheckObject(o);
    }
  }
  (void)lens::controller::ParseKubeTime(input.substr(0, 64));
  (void)lens::controller::ParseQuantity(input.substr(0, 32));
  return 0;
}
