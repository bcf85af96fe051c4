// The lens_gpu_* families only NVIDIA reports today: lifetime ECC counts and
// MIG devices (documented in docs/node-agent.md with the rest).
#ifndef LENS_AGENT_METRICS_RENDER_NVIDIA_H_
#define LENS_AGENT_METRICS_RENDER_NVIDIA_H_

#include "agent/node_agent.h"
#include "core/metric_writer.h"

namespace lens::agent {

// Appends lens_gpu_ecc_lifetime_errors_total, lens_gpu_mig_enabled,
// lens_gpu_mig_device_info and lens_gpu_mig_memory_{total,used}_bytes; a
// family no GPU reports is left out.
void RenderNvidiaGpuMetrics(const NodeSnapshot& snapshot, MetricWriter& w);

}  // namespace lens::agent

#endif  // LENS_AGENT_METRICS_RENDER_NVIDIA_H_
