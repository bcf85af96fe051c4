// Prometheus text for a NodeSnapshot: Lens's vendor-neutral names
// (lens_gpu_*, lens_rdma_*, lens_node_*, lens_agent_*) and, when asked, the
// original platform's names (gpu_utilization, rdma_stat_*, ...). The schema
// is documented in docs/node-agent.md.
#ifndef LENS_AGENT_METRICS_RENDER_H_
#define LENS_AGENT_METRICS_RENDER_H_

#include <string>

#include "agent/node_agent.h"

namespace lens::agent {

// Appends the lens_* families.
void RenderLensMetrics(const NodeSnapshot& snapshot, std::string* out);
// Appends the compatibility families.
void RenderCompatMetrics(const NodeSnapshot& snapshot, std::string* out);

}  // namespace lens::agent

#endif  // LENS_AGENT_METRICS_RENDER_H_
