// The node REST API (/gpus, /gpuDriverVersion, /cardMetrics, /driMapping,
// /rdma, /node, /healthz, /metrics) over a NodeAgent's snapshots. Shapes keep
// the original platform's fields, inside the {"code","data","message"}
// envelope, with Lens's own fields added beside them (docs/node-agent.md).
#ifndef LENS_AGENT_REST_H_
#define LENS_AGENT_REST_H_

#include <string>

#include "agent/node_agent.h"
#include "http/http.h"

namespace lens::agent {

void RegisterNodeRoutes(const NodeAgent& agent, HttpServer& server);

// The JSON `data` of each route, for tests and the CLI.
std::string GpusJson(const NodeSnapshot& s);
std::string CardMetricsJson(const NodeSnapshot& s);
std::string DriMappingJson(const NodeSnapshot& s);
std::string RdmaJson(const NodeSnapshot& s);
std::string NodeJson(const NodeSnapshot& s);
// Everything lens-jobs reads from a node in one answer: the node facts, the
// GPUs with their latest sample, the RDMA devices with their ports.
std::string ReportJson(const NodeSnapshot& s);
// The GPU driver version: amdgpu module version, else the GPUs' driver
// version, else the NVIDIA driver's; empty when none is known.
std::string GpuDriverVersion(const NodeSnapshot& s);

}  // namespace lens::agent

#endif  // LENS_AGENT_REST_H_
