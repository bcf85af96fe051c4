"""The same dashboards over the original platform's metric names, which Lens exports beside
its own with `metrics.compatNames: true` (node agent, lens-netflow, lens-jobs) and
`telemetry.compatNames: true` (lens-telemetry's `workload_<name>` series). Units are the
original's: gpu_utilization and workload_gpu_utilization are percent, rdma_stat_port_*_data
counts 4-octet words; lens-jobs' compat ratios are 0..1 (docs/jobs.md).

Training progress has no name of the original: that dashboard reads lens_training_*."""

from dashboard_layout import dashboard, heatmap, query_variable, row, stat, table, targets, \
    timeseries

RI = "$__rate_interval"
TAGS = ["lens", "lens-compat"]

# ---------------------------------------------------------------------------------------------
N = 'node=~"$node"'
cluster = dashboard(
    "lens-cluster-compat", "Lens / Cluster (original metric names)",
    "GPU nodes, allocation and utilisation of the whole cluster.", TAGS,
    [query_variable("node", "Node", "label_values(gpu_utilization, node)")],
    [
        stat(1, "Nodes", "Nodes with GPUs reporting utilisation.",
             targets((f"count(count by (node) (gpu_utilization{{{N}}}))", "nodes"))),
        stat(2, "GPUs", "GPUs reporting utilisation.",
             targets((f"count(gpu_utilization{{{N}}})", "GPUs"))),
        stat(3, "GPU allocation", "GPUs held by pods over allocatable GPUs.",
             targets(("gpu_allocation_rate", "allocated")), "percentunit"),
        stat(4, "Mean GPU utilisation", "Busy time of every GPU, averaged.",
             targets((f"avg(gpu_utilization{{{N}}})", "utilisation")), "percent"),
        stat(5, "GPUs held by workloads", "Sum over the GPU consumers.",
             targets(("sum(consumer_pod_gpu_allocated)", "GPUs")), w=8),
        row(100, "Utilisation and allocation"),
        timeseries(6, "GPU utilisation by node", "Mean busy time of each node's GPUs.",
                   targets((f"avg by (node) (gpu_utilization{{{N}}})", "{{node}}")),
                   "percent", min_=0, max_=100),
        timeseries(7, "GPU allocation by node", "GPUs held by pods over allocatable (lens-jobs).",
                   targets((f"max by (node) (node_k8s_gpu_allocation_rate{{{N}}})", "{{node}}")),
                   "percentunit", min_=0),
        heatmap(8, "GPU utilisation, every GPU", "How many GPUs ran at each utilisation.",
                targets((f"gpu_utilization{{{N}}}", "{{node}} GPU {{gpu_id}}")), "percent"),
        timeseries(9, "RDMA throughput by node", "Bytes sent plus received on every HCA port.",
                   targets((f"4 * sum by (node) (rate(rdma_stat_port_xmit_data{{{N}}}[{RI}]) + "
                            f"rate(rdma_stat_port_rcv_data{{{N}}}[{RI}]))", "{{node}}")), "Bps"),
        table(10, "GPU consumers", "GPUs, pods and utilisation per workload.",
              targets(("consumer_pod_gpu_allocated", "GPUs"),
                      ("consumer_pod_active_pods", "pods"),
                      ("consumer_pod_gpu_utilization", "utilisation")), w=24,
              hide=("job", "instance")),
    ])

# ---------------------------------------------------------------------------------------------
ON = 'node="$node"'
G = f'{ON}, gpu_id=~"$gpu"'
D = f'{ON}, device=~"$device"'
node = dashboard(
    "lens-node-compat", "Lens / Node (original metric names)",
    "One GPU node: its GPUs and HCAs.", TAGS,
    [query_variable("node", "Node", "label_values(gpu_utilization, node)", multi=False),
     query_variable("gpu", "GPU", 'label_values(gpu_utilization{node="$node"}, gpu_id)'),
     query_variable("device", "RDMA device",
                    'label_values(rdma_stat_port_xmit_data{node="$node"}, device)')],
    [
        stat(1, "GPUs", "GPUs reporting utilisation.",
             targets((f"count(gpu_utilization{{{ON}}})", "GPUs"))),
        stat(2, "Mean GPU utilisation", "Busy time of the selected GPUs.",
             targets((f"avg(gpu_utilization{{{G}}})", "utilisation")), "percent"),
        stat(3, "GPU allocation", "GPUs held by pods over allocatable.",
             targets((f"max(node_k8s_gpu_allocation_rate{{{ON}}})", "allocated")),
             "percentunit"),
        stat(4, "RDMA ports", "Ports with counters.",
             targets((f"count(rdma_stat_port_xmit_data{{{D}}})", "ports"))),
        timeseries(5, "GPU utilisation", "Busy time per GPU.",
                   targets((f"max by (gpu_id) (gpu_utilization{{{G}}})", "GPU {{gpu_id}}")),
                   "percent", w=24, min_=0, max_=100),
        row(100, "RDMA"),
        timeseries(6, "RDMA transmit", "Bytes sent per port.",
                   targets((f"4 * sum by (device, port) (rate(rdma_stat_port_xmit_data{{{D}}}"
                            f"[{RI}]))", "{{device}}:{{port}}")), "Bps"),
        timeseries(7, "RDMA receive", "Bytes received per port.",
                   targets((f"4 * sum by (device, port) (rate(rdma_stat_port_rcv_data{{{D}}}"
                            f"[{RI}]))", "{{device}}:{{port}}")), "Bps"),
        timeseries(8, "RDMA packets", "Packets sent and received per port.",
                   targets((f"sum by (device, port) (rate(rdma_stat_port_xmit_packets{{{D}}}"
                            f"[{RI}]))", "{{device}}:{{port}} tx"),
                           (f"sum by (device, port) (rate(rdma_stat_port_rcv_packets{{{D}}}"
                            f"[{RI}]))", "{{device}}:{{port}} rx")), "pps"),
        table(9, "RDMA errors in range", "Port error counters that grew.",
              targets((f"sum by (device) (increase(rdma_stat_symbol_error{{{D}}}[$__range]))",
                       "symbol errors"),
                      (f"sum by (device) (increase(rdma_stat_port_rcv_errors{{{D}}}[$__range]))",
                       "receive errors"),
                      (f"sum by (device) (increase(rdma_stat_port_xmit_discards{{{D}}}"
                       "[$__range]))", "transmit discards"),
                      (f"sum by (device) (increase(rdma_stat_link_downed{{{D}}}[$__range]))",
                       "link downed"))),
        timeseries(10, "RoCE congestion and retransmits", "CNPs and sequence errors per port.",
                   targets((f"sum by (device) (rate(rdma_stat_np_cnp_sent{{{D}}}[{RI}]))",
                            "{{device}} CNPs sent"),
                           (f"sum by (device) (rate(rdma_stat_out_of_sequence{{{D}}}[{RI}]))",
                            "{{device}} out of sequence")), "pps"),
    ])

# ---------------------------------------------------------------------------------------------
W = 'namespace=~"$namespace", workload_name=~"$workload"'
WE = 'workload_namespace=~"$namespace", workload_name=~"$workload"'
workload = dashboard(
    "lens-workload-compat", "Lens / Workload (original metric names)",
    "GPU consumers (top-level workloads) and the utilisation of the GPUs they hold.", TAGS,
    [query_variable("namespace", "Namespace",
                    "label_values(consumer_pod_gpu_allocated, namespace)"),
     query_variable("workload", "Workload",
                    'label_values(consumer_pod_gpu_allocated{namespace=~"$namespace"}, '
                    'workload_name)')],
    [
        stat(1, "GPUs held", "GPUs the workloads' active pods hold.",
             targets((f"sum(consumer_pod_gpu_allocated{{{W}}})", "GPUs")), w=8),
        stat(2, "Active pods", "Pods of the workloads.",
             targets((f"sum(consumer_pod_active_pods{{{W}}})", "pods")), w=8),
        stat(3, "Mean GPU utilisation", "Over exactly the GPUs they hold.",
             targets((f"avg(consumer_pod_gpu_utilization{{{W}}})", "utilisation")),
             "percentunit", w=8),
        timeseries(4, "GPU utilisation by workload", "Mean over the held GPUs.",
                   targets((f"consumer_pod_gpu_utilization{{{W}}}",
                            "{{namespace}}/{{workload_name}}")), "percentunit", min_=0, max_=1),
        timeseries(5, "GPUs held", "Per workload.",
                   targets((f"consumer_pod_gpu_allocated{{{W}}}",
                            "{{namespace}}/{{workload_name}}")), min_=0),
        timeseries(6, "GPU utilisation per GPU", "workload_gpu_utilization (lens-telemetry).",
                   targets((f"max by (workload_name, node, gpu_id) "
                            f"(workload_gpu_utilization{{{WE}}})",
                            "{{workload_name}} {{node}} GPU {{gpu_id}}")),
                   "percent", min_=0, max_=100),
        heatmap(7, "GPU utilisation spread", "How many of the workloads' GPUs ran at each level.",
                targets((f"workload_gpu_utilization{{{WE}}}", "{{node}} GPU {{gpu_id}}")),
                "percent"),
    ])

# ---------------------------------------------------------------------------------------------
T = W
training = dashboard(
    "lens-training-compat", "Lens / Training (original metric names)",
    "Training progress from the workloads' logs. The original exported no training series: "
    "these are lens_training_*, beside workload_gpu_utilization.", TAGS,
    [query_variable("namespace", "Namespace", "label_values(lens_training_iteration, namespace)"),
     query_variable("workload", "Workload",
                    'label_values(lens_training_iteration{namespace=~"$namespace"}, '
                    'workload_name)')],
    [
        stat(1, "Iteration", "Latest iteration logged.",
             targets((f"max by (workload_name) (lens_training_iteration{{{T}}})",
                      "{{workload_name}}")), w=6, decimals=0),
        stat(2, "Loss", "Latest loss logged.",
             targets((f"min by (workload_name) (lens_training_loss{{{T}}})",
                      "{{workload_name}}")), w=6),
        stat(3, "TFLOP/s per GPU", "Latest model TFLOP/s per GPU.",
             targets((f"max by (workload_name) (lens_training_tflops_per_gpu{{{T}}})",
                      "{{workload_name}}")), w=6),
        stat(4, "Step time", "Latest time of one iteration.",
             targets((f"max by (workload_name) (lens_training_step_seconds{{{T}}})",
                      "{{workload_name}}")), "s", w=6),
        timeseries(5, "Loss", "Latest loss logged.",
                   targets((f"lens_training_loss{{{T}}}", "{{workload_name}}"))),
        timeseries(6, "TFLOP/s per GPU", "Model TFLOP/s per GPU.",
                   targets((f"lens_training_tflops_per_gpu{{{T}}}", "{{workload_name}}")),
                   min_=0),
        timeseries(7, "Iteration", "Latest iteration logged.",
                   targets((f"lens_training_iteration{{{T}}}", "{{workload_name}}"))),
        timeseries(8, "GPU utilisation of the workload", "workload_gpu_utilization, mean.",
                   targets((f"avg by (workload_name) (workload_gpu_utilization{{{WE}}})",
                            "{{workload_name}}")), "percent", min_=0, max_=100),
    ])

# ---------------------------------------------------------------------------------------------
NN = 'node=~"$node"'
ND = f'{NN}, device=~"$device"'
NT = f'{NN}, type=~"$type"'
network = dashboard(
    "lens-network-compat", "Lens / Network (original metric names)",
    "RDMA port counters and TCP flows by remote class.", TAGS,
    [query_variable("node", "Node", "label_values(rdma_stat_port_xmit_data, node)"),
     query_variable("device", "RDMA device",
                    'label_values(rdma_stat_port_xmit_data{node=~"$node"}, device)'),
     query_variable("type", "Endpoint class",
                    'label_values(primus_lens_network_tcp_flow_egress{node=~"$node"}, type)')],
    [
        row(100, "RDMA"),
        timeseries(1, "RDMA transmit", "Bytes sent per node and device.",
                   targets((f"4 * sum by (node, device) (rate(rdma_stat_port_xmit_data{{{ND}}}"
                            f"[{RI}]))", "{{node}} {{device}}")), "Bps"),
        timeseries(2, "RDMA receive", "Bytes received per node and device.",
                   targets((f"4 * sum by (node, device) (rate(rdma_stat_port_rcv_data{{{ND}}}"
                            f"[{RI}]))", "{{node}} {{device}}")), "Bps"),
        timeseries(3, "RoCE congestion", "CNPs sent and handled.",
                   targets((f"sum by (node, device) (rate(rdma_stat_np_cnp_sent{{{ND}}}[{RI}]))",
                            "{{node}} {{device}} sent"),
                           (f"sum by (node, device) (rate(rdma_stat_rp_cnp_handled{{{ND}}}"
                            f"[{RI}]))", "{{node}} {{device}} handled")), "pps"),
        timeseries(4, "RDMA timeouts", "Local ack timeouts and out-of-sequence packets.",
                   targets((f"sum by (node, device) (rate(rdma_stat_local_ack_timeout_err"
                            f"{{{ND}}}[{RI}]))", "{{node}} {{device}} ack timeouts"),
                           (f"sum by (node, device) (rate(rdma_stat_out_of_sequence{{{ND}}}"
                            f"[{RI}]))", "{{node}} {{device}} out of sequence")), "pps"),
        row(101, "TCP flows (eBPF)"),
        timeseries(5, "TCP egress by class", "Bytes of connections this node opened.",
                   targets((f"sum by (type) (rate(primus_lens_network_tcp_flow_egress{{{NT}}}"
                            f"[{RI}]))", "{{type}}")), "Bps"),
        timeseries(6, "TCP ingress by class", "Bytes of connections this node accepted.",
                   targets((f"sum by (type) (rate(primus_lens_network_tcp_flow_ingress{{{NT}}}"
                            f"[{RI}]))", "{{type}}")), "Bps"),
        heatmap(7, "Round-trip time", "Smoothed RTT samples by bucket (µs).",
                targets((f"sum by (le) (rate(primus_lens_network_tcp_flow_rtt_bucket{{{NT}}}"
                         f"[{RI}]))", "{{le}}")), "µs", buckets=True),
        timeseries(8, "Round-trip time p99", "99th percentile srtt by class.",
                   targets((f"histogram_quantile(0.99, sum by (le, type) (rate("
                            f"primus_lens_network_tcp_flow_rtt_bucket{{{NT}}}[{RI}])))",
                            "{{type}}")), "µs"),
    ])

ALL = {
    "lens-cluster.json": cluster,
    "lens-node.json": node,
    "lens-workload.json": workload,
    "lens-training.json": training,
    "lens-network.json": network,
}
