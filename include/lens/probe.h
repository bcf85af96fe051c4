// One-shot probe of a host: its GPUs, RDMA devices and node facts, as `lens
// probe` prints them and the Python bindings return them.
#ifndef LENS_PROBE_H_
#define LENS_PROBE_H_

#include <string>
#include <vector>

#include "lens/export.h"
#include "lens/gpu.h"
#include "lens/host.h"
#include "lens/node.h"
#include "lens/rdma.h"
#include "lens/status.h"

namespace lens {

struct LENS_EXPORT ProbeReport {
  std::vector<Gpu> gpus;
  std::vector<RdmaProbe> rdma;
  NodeFacts node;
  // Parts that could not be read ("rdma: ..."), the rest is still reported.
  std::vector<std::string> warnings;
};

// Probes everything under `roots`. Fails only when nothing at all could be
// read (then the error names each part's problem).
LENS_EXPORT StatusOr<ProbeReport> ProbeHost(const HostRoots& roots,
                                            const GpuProbeOptions& gpu = {});

// {"gpus":[...],"rdma":[...],"node":{...}}: each GPU with vendor, index, bdf,
// model, serial and every reported value in base units (keys only when
// reported); each RDMA device with name, fw_version, board_id, node_guid and
// ports [{port, state, link_layer, rate_gbps, tx_bytes, rx_bytes,
// counters:{name: value}}]. Documented in docs/node-agent.md.
LENS_EXPORT std::string ProbeReportJson(const ProbeReport& report);
// A readable table of the same, for terminals.
LENS_EXPORT std::string ProbeReportText(const ProbeReport& report);

// A byte count for people, in decimal units with one decimal: "512 B",
// "1.5 kB", "124.0 TB".
LENS_EXPORT std::string HumanBytes(uint64_t bytes);

}  // namespace lens

#endif  // LENS_PROBE_H_
