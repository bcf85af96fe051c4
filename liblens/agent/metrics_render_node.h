// The node agent's families that are not per GPU: RDMA devices and ports, node
// facts and allocation, and the agent's own collectors (documented in
// docs/node-agent.md with the rest).
#ifndef LENS_AGENT_METRICS_RENDER_NODE_H_
#define LENS_AGENT_METRICS_RENDER_NODE_H_

#include "agent/node_agent.h"
#include "core/metric_writer.h"

namespace lens::agent {

// Appends lens_rdma_device_info, lens_rdma_port_* (state, rate, data and
// packet counters, standard and hardware statistics).
void RenderRdmaMetrics(const NodeSnapshot& snapshot, MetricWriter& w);
// Appends lens_node_* (facts, GPUs and their allocation, ephemeral storage)
// and lens_pod_ephemeral_storage_used_bytes.
void RenderNodeMetrics(const NodeSnapshot& snapshot, MetricWriter& w);
// Appends lens_agent_* (each collector's health, duration and runs; cycles).
void RenderAgentMetrics(const NodeSnapshot& snapshot, MetricWriter& w);

}  // namespace lens::agent

#endif  // LENS_AGENT_METRICS_RENDER_NODE_H_
