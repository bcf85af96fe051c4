"""The dashboards over Lens's own metric names (docs/node-agent.md, netflow.md, jobs.md,
telemetry.md). `node` is the target label the scrape adds to the node agent's and
lens-netflow's series (README.md); lens-jobs and lens-telemetry label their own series."""

from dashboard_layout import (dashboard, heatmap, query_variable, row, stat, table, targets,
                              timeseries)

RI = "$__rate_interval"
TAGS = ["lens"]

# ---------------------------------------------------------------------------------------------
N = 'node=~"$node"'
cluster = dashboard(
    "lens-cluster", "Lens / Cluster",
    "GPU nodes, allocation and utilisation of the whole cluster.", TAGS,
    [query_variable("node", "Node", "label_values(lens_node_gpus, node)")],
    [
        stat(1, "Nodes", "Nodes whose node agent is scraped.",
             targets((f"count(lens_node_gpus{{{N}}})", "nodes"))),
        stat(2, "GPUs", "GPUs the node agents see.",
             targets((f"sum(lens_node_gpus{{{N}}})", "GPUs"))),
        stat(3, "GPU allocation", "GPUs held by pods over allocatable GPUs (lens-jobs).",
             targets(("lens_cluster_gpu_allocation_ratio", "allocated")), "percentunit"),
        stat(4, "GPUs allocated", "GPUs held by bound, non-terminal pods, and allocatable GPUs.",
             targets(("lens_cluster_gpus_allocated", "allocated"),
                     ("lens_cluster_gpus_allocatable", "allocatable"))),
        stat(5, "Mean GPU utilisation", "Busy time of every GPU, averaged.",
             targets((f"avg(lens_gpu_utilization_ratio{{{N}}})", "utilisation")),
             "percentunit"),
        stat(6, "Node agents answering", "Share of node agents lens-jobs reached last round.",
             targets((f"sum(lens_node_agent_up{{{N}}}) / count(lens_node_agent_up{{{N}}})",
                      "up")), "percentunit"),
        row(100, "Utilisation and allocation"),
        timeseries(7, "GPU utilisation by node", "Mean busy time of each node's GPUs.",
                   targets((f"avg by (node) (lens_gpu_utilization_ratio{{{N}}})", "{{node}}")),
                   "percentunit", min_=0, max_=1),
        timeseries(8, "GPU allocation by node", "GPUs held by pods over allocatable (lens-jobs).",
                   targets((f"lens_gpu_allocation_ratio{{{N}}}", "{{node}}")),
                   "percentunit", min_=0, max_=1),
        heatmap(9, "GPU utilisation, every GPU", "How many GPUs ran at each utilisation.",
                targets((f"lens_gpu_utilization_ratio{{{N}}}", "{{node}} GPU {{gpu}}")),
                "percentunit"),
        timeseries(10, "GPU power by node", "Board power of each node's GPUs, summed.",
                   targets((f"sum by (node) (lens_gpu_power_watts{{{N}}})", "{{node}}")),
                   "watt"),
        timeseries(11, "VRAM used by node", "VRAM in use over VRAM size, per node.",
                   targets((f"sum by (node) (lens_gpu_memory_used_bytes{{{N}}}) / "
                            f"sum by (node) (lens_gpu_memory_total_bytes{{{N}}})", "{{node}}")),
                   "percentunit", min_=0, max_=1),
        timeseries(12, "RDMA throughput by node", "Bytes sent plus received on every HCA port.",
                   targets((f"sum by (node) (rate(lens_rdma_port_transmit_bytes_total{{{N}}}"
                            f"[{RI}]) + rate(lens_rdma_port_receive_bytes_total{{{N}}}[{RI}]))",
                            "{{node}}")), "Bps"),
        row(101, "Inventory and health"),
        table(13, "Nodes", "What each node agent reports about its node.",
              targets((f"lens_node_info{{{N}}}", "")), w=24,
              hide=("Value", "job", "instance", "exported_node")),
        table(14, "Top workloads by GPUs", "The 20 workloads holding the most GPUs (lens-jobs).",
              targets(("topk(20, lens_workload_gpus)", "")), hide=("job", "instance")),
        table(15, "GPU ECC errors in range", "Correctable and uncorrectable errors per node.",
              targets((f"sum by (node, type) (increase(lens_gpu_ecc_errors_total{{{N}}}"
                       "[$__range]))", ""))),
        timeseries(16, "Scheduled jobs: seconds since last success",
                   "lens-jobs' jobs; the `job` label of their series becomes exported_job "
                   "under a default scrape.",
                   targets(("max by (exported_job) (time() - "
                            "lens_job_last_success_timestamp_seconds)", "{{exported_job}}")),
                   "s"),
        timeseries(17, "Node agent collectors failing", "Collectors whose last run failed.",
                   targets((f"sum by (node, collector) (1 - lens_agent_collector_up{{{N}}})",
                            "{{node}} {{collector}}")), min_=0),
    ])

# ---------------------------------------------------------------------------------------------
ON = 'node="$node"'
G = f'{ON}, gpu=~"$gpu"'
D = f'{ON}, device=~"$device"'
RDMA_ERRORS = ("symbol_error|link_downed|link_error_recovery|port_rcv_errors|port_xmit_discards|"
               "local_link_integrity_errors|excessive_buffer_overrun_errors")
node = dashboard(
    "lens-node", "Lens / Node",
    "One GPU node: its GPUs, HCAs and node agent.", TAGS,
    [query_variable("node", "Node", "label_values(lens_node_gpus, node)", multi=False),
     query_variable("gpu", "GPU", 'label_values(lens_gpu_info{node="$node"}, gpu)'),
     query_variable("device", "RDMA device",
                    'label_values(lens_rdma_port_up{node="$node"}, device)')],
    [
        stat(1, "GPUs", "GPUs on the node.", targets((f"lens_node_gpus{{{ON}}}", "GPUs"))),
        stat(2, "CPUs", "Logical CPUs.", targets((f"lens_node_cpus{{{ON}}}", "CPUs"))),
        stat(3, "Memory available", "Available over total memory.",
             targets((f"lens_node_memory_available_bytes{{{ON}}} / "
                      f"lens_node_memory_total_bytes{{{ON}}}", "available")), "percentunit"),
        stat(4, "GPU allocation", "GPUs held by pods over allocatable (lens-jobs).",
             targets((f"lens_gpu_allocation_ratio{{{ON}}}", "allocated")), "percentunit"),
        stat(5, "Collectors up", "Node agent collectors whose last run succeeded.",
             targets((f"sum(lens_agent_collector_up{{{ON}}})", "up"),
                     (f"count(lens_agent_collector_up{{{ON}}})", "collectors"))),
        stat(6, "Mean GPU utilisation", "Busy time of the selected GPUs.",
             targets((f"avg(lens_gpu_utilization_ratio{{{G}}})", "utilisation")),
             "percentunit"),
        table(7, "GPU inventory", "Model, serial, PCI address, DRM nodes and partition.",
              targets((f"lens_gpu_info{{{G}}}", "")), w=24,
              hide=("Value", "job", "instance", "node")),
        row(100, "GPUs"),
        timeseries(8, "GPU utilisation", "Busy time per GPU.",
                   targets((f"max by (gpu) (lens_gpu_utilization_ratio{{{G}}})", "GPU {{gpu}}")),
                   "percentunit", min_=0, max_=1),
        timeseries(9, "Memory controller busy", "Memory activity per GPU.",
                   targets((f"max by (gpu) (lens_gpu_memory_utilization_ratio{{{G}}})",
                            "GPU {{gpu}}")), "percentunit", min_=0, max_=1),
        timeseries(10, "VRAM used", "VRAM in use per GPU.",
                   targets((f"max by (gpu) (lens_gpu_memory_used_bytes{{{G}}})", "GPU {{gpu}}"),
                           (f"max(lens_gpu_memory_total_bytes{{{G}}})", "VRAM size")), "bytes"),
        timeseries(11, "Power", "Board power per GPU and the highest power cap.",
                   targets((f"max by (gpu) (lens_gpu_power_watts{{{G}}})", "GPU {{gpu}}"),
                           (f"max(lens_gpu_power_cap_watts{{{G}}})", "power cap")), "watt"),
        timeseries(12, "Temperature", "Every sensor a GPU reports (edge, junction, memory).",
                   targets((f"max by (gpu, sensor) (lens_gpu_temperature_celsius{{{G}}})",
                            "GPU {{gpu}} {{sensor}}")), "celsius"),
        timeseries(13, "Clocks", "Current graphics, memory and SoC clocks.",
                   targets((f"max by (gpu, clock) (lens_gpu_clock_hertz{{{G}}})",
                            "GPU {{gpu}} {{clock}}")), "hertz"),
        table(14, "PCIe link", "Current link speed and width per GPU.",
              targets((f"max by (gpu) (lens_gpu_pcie_link_speed_transfers_per_second{{{G}}})",
                       "speed"),
                      (f"max by (gpu) (lens_gpu_pcie_link_width{{{G}}})", "width"))),
        timeseries(15, "ECC errors and PCIe replays",
                   "New errors per interval: ECC by type, PCIe replays.",
                   targets((f"sum by (gpu, type) (increase(lens_gpu_ecc_errors_total{{{G}}}"
                            f"[{RI}]))", "GPU {{gpu}} ECC {{type}}"),
                           (f"sum by (gpu) (increase(lens_gpu_pcie_replays_total{{{G}}}[{RI}]))",
                            "GPU {{gpu}} PCIe replays")), min_=0),
        row(101, "RDMA"),
        timeseries(16, "RDMA transmit", "Bytes sent per port.",
                   targets((f"sum by (device, port) (rate(lens_rdma_port_transmit_bytes_total"
                            f"{{{D}}}[{RI}]))", "{{device}}:{{port}}")), "Bps"),
        timeseries(17, "RDMA receive", "Bytes received per port.",
                   targets((f"sum by (device, port) (rate(lens_rdma_port_receive_bytes_total"
                            f"{{{D}}}[{RI}]))", "{{device}}:{{port}}")), "Bps"),
        timeseries(18, "RDMA packets", "Packets sent and received per port.",
                   targets((f"sum by (device, port) (rate(lens_rdma_port_transmit_packets_total"
                            f"{{{D}}}[{RI}]))", "{{device}}:{{port}} tx"),
                           (f"sum by (device, port) (rate(lens_rdma_port_receive_packets_total"
                            f"{{{D}}}[{RI}]))", "{{device}}:{{port}} rx")), "pps"),
        table(19, "RDMA ports", "State (1: ACTIVE) and link rate per port.",
              targets((f"max by (device, port, link_layer) "
                       f"(lens_rdma_port_rate_bytes_per_second{{{D}}})", "rate"),
                      (f"max by (device, port) (lens_rdma_port_up{{{D}}})", "up")), "Bps"),
        table(20, "RDMA error counters in range", "Link and port error counters that grew.",
              targets((f"sum by (device, counter) (increase(lens_rdma_port_stat_total{{{D}, "
                       f'counter=~"{RDMA_ERRORS}"}}[$__range]))', ""))),
        table(21, "RDMA hardware counters in range", "The 20 busiest hw_counters.",
              targets((f"topk(20, sum by (device, counter) (increase("
                       f"lens_rdma_port_hw_stat_total{{{D}}}[$__range])))", ""))),
        timeseries(22, "Node agent collector time", "How long each collector's last run took.",
                   targets((f"max by (collector) (lens_agent_collector_duration_seconds{{{ON}}})",
                            "{{collector}}")), "s"),
    ])

# ---------------------------------------------------------------------------------------------
W = 'namespace=~"$namespace", workload_name=~"$workload"'
WE = 'workload_namespace=~"$namespace", workload_name=~"$workload"'
workload = dashboard(
    "lens-workload", "Lens / Workload",
    "Workloads (top-level owners of GPU pods): the GPUs they hold and how they use them. "
    "Per-GPU panels read the series lens-telemetry enriched with workload labels.", TAGS,
    [query_variable("namespace", "Namespace", "label_values(lens_workload_gpus, namespace)"),
     query_variable("workload", "Workload",
                    'label_values(lens_workload_gpus{namespace=~"$namespace"}, workload_name)')],
    [
        stat(1, "Workloads", "Workloads holding GPUs.",
             targets((f"count(lens_workload_gpus{{{W}}})", "workloads"))),
        stat(2, "GPUs held", "GPUs their active pods hold.",
             targets((f"sum(lens_workload_gpus{{{W}}})", "GPUs"))),
        stat(3, "Active pods", "Pods of the workloads that hold GPUs.",
             targets((f"sum(lens_workload_pods{{{W}}})", "pods"))),
        stat(4, "Mean GPU utilisation", "Mean busy time of exactly the GPUs they hold.",
             targets((f"avg(lens_workload_gpu_utilization_ratio{{{W}}})", "utilisation")),
             "percentunit"),
        table(5, "Workloads", "GPUs held per workload.",
              targets((f"lens_workload_gpus{{{W}}}", "")), w=8, hide=("job", "instance")),
        timeseries(6, "GPU utilisation by workload", "lens-jobs' mean over the held GPUs.",
                   targets((f"lens_workload_gpu_utilization_ratio{{{W}}}",
                            "{{namespace}}/{{workload_name}}")),
                   "percentunit", w=8, min_=0, max_=1),
        timeseries(7, "GPUs held", "GPUs held per workload.",
                   targets((f"lens_workload_gpus{{{W}}}", "{{namespace}}/{{workload_name}}")),
                   w=8, min_=0),
        row(100, "The workloads' GPUs (enriched by lens-telemetry)"),
        timeseries(8, "GPU utilisation per GPU", "Each GPU while the workload held it.",
                   targets((f"max by (workload_name, node, gpu) (lens_gpu_utilization_ratio{{{WE}}})",
                            "{{workload_name}} {{node}} GPU {{gpu}}")),
                   "percentunit", min_=0, max_=1),
        heatmap(9, "GPU utilisation spread", "How many of the workloads' GPUs ran at each level.",
                targets((f"lens_gpu_utilization_ratio{{{WE}}}", "{{node}} GPU {{gpu}}")),
                "percentunit"),
        timeseries(10, "VRAM used by workload", "VRAM in use on the GPUs each workload holds.",
                   targets((f"sum by (workload_namespace, workload_name) "
                            f"(lens_gpu_memory_used_bytes{{{WE}}})", "{{workload_name}}")),
                   "bytes"),
        timeseries(11, "Power by workload", "Board power of the GPUs each workload holds.",
                   targets((f"sum by (workload_namespace, workload_name) "
                            f"(lens_gpu_power_watts{{{WE}}})", "{{workload_name}}")), "watt"),
        timeseries(12, "Hottest GPU junction", "Highest junction temperature per workload.",
                   targets((f'max by (workload_name) (lens_gpu_temperature_celsius{{{WE}, '
                            f'sensor="junction"}})', "{{workload_name}}")), "celsius"),
        table(13, "GPUs held now", "Each GPU, its node and the pod holding it.",
              targets((f"max by (workload_namespace, workload_name, pod_uid, node, gpu, bdf) "
                       f"(lens_gpu_utilization_ratio{{{WE}}})", "")), "percentunit"),
    ])

# ---------------------------------------------------------------------------------------------
T = W
training = dashboard(
    "lens-training", "Lens / Training",
    "Training progress from the workloads' logs (lens-telemetry parses what fluent-bit ships): "
    "the latest iteration, loss, throughput and step time each workload printed.", TAGS,
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
        stat(5, "Step time", "Latest time of one iteration.",
             targets((f"max by (workload_name) (lens_training_step_seconds{{{T}}})",
                      "{{workload_name}}")), "s", w=6),
        row(100, "Progress"),
        timeseries(6, "Iteration", "Latest iteration logged.",
                   targets((f"lens_training_iteration{{{T}}}", "{{workload_name}}"))),
        timeseries(7, "Loss", "Latest loss logged.",
                   targets((f"lens_training_loss{{{T}}}", "{{workload_name}}"))),
        timeseries(8, "TFLOP/s per GPU", "Model TFLOP/s per GPU.",
                   targets((f"lens_training_tflops_per_gpu{{{T}}}", "{{workload_name}}")),
                   min_=0),
        timeseries(10, "Step time", "Time of one iteration.",
                   targets((f"lens_training_step_seconds{{{T}}}", "{{workload_name}}")), "s"),
        timeseries(11, "Iterations per minute", "How fast the iteration count grows.",
                   targets((f"deriv(lens_training_iteration{{{T}}}[{RI}]) * 60",
                            "{{workload_name}}")), min_=0),
        timeseries(12, "GPU utilisation of the workload", "Mean busy time of its GPUs.",
                   targets((f"avg by (workload_name) (lens_gpu_utilization_ratio{{{WE}}})",
                            "{{workload_name}}")), "percentunit", min_=0, max_=1),
        row(101, "The logs path"),
        timeseries(13, "Log records", "Records lens-telemetry received and rows it stored.",
                   targets((f"sum(rate(lens_telemetry_log_records_total[{RI}]))", "received"),
                           (f"sum by (kind) (rate(lens_telemetry_log_stored_total[{RI}]))",
                            "stored {{kind}}")), "ops", w=8),
        timeseries(14, "Log records skipped", "Records not parsed, by reason.",
                   targets((f"sum by (reason) (rate(lens_telemetry_log_records_skipped_total"
                            f"[{RI}]))", "{{reason}}")), "ops", w=8),
        timeseries(15, "Log latency p90", "Arrival time minus the record's time, per node.",
                   targets(("histogram_quantile(0.9, sum by (le, node) "
                            "(lens_telemetry_log_latency_seconds_bucket))", "{{node}}")),
                   "s", w=8),
    ])

# ---------------------------------------------------------------------------------------------
NN = 'node=~"$node"'
ND = f'{NN}, device=~"$device"'
NC = f'{NN}, class=~"$class"'
network = dashboard(
    "lens-network", "Lens / Network",
    "RDMA ports (node agent) and TCP flows by class, direction and workload (lens-netflow).",
    TAGS,
    [query_variable("node", "Node", "label_values(lens_rdma_port_up, node)"),
     query_variable("device", "RDMA device",
                    'label_values(lens_rdma_port_up{node=~"$node"}, device)'),
     query_variable("class", "Endpoint class",
                    'label_values(lens_tcp_flow_bytes_sent_total{node=~"$node"}, class)')],
    [
        row(100, "RDMA"),
        stat(1, "Ports up", "Ports ACTIVE over all ports.",
             targets((f"sum(lens_rdma_port_up{{{ND}}}) / count(lens_rdma_port_up{{{ND}}})",
                      "up")), "percentunit"),
        stat(2, "Link capacity", "Sum of the ports' link rates.",
             targets((f"sum(lens_rdma_port_rate_bytes_per_second{{{ND}}})", "capacity")),
             "Bps"),
        stat(3, "RDMA throughput", "Bytes sent plus received, all ports.",
             targets((f"sum(rate(lens_rdma_port_transmit_bytes_total{{{ND}}}[{RI}])) + "
                      f"sum(rate(lens_rdma_port_receive_bytes_total{{{ND}}}[{RI}]))",
                      "throughput")), "Bps"),
        timeseries(4, "RDMA transmit", "Bytes sent per node and device.",
                   targets((f"sum by (node, device) (rate(lens_rdma_port_transmit_bytes_total"
                            f"{{{ND}}}[{RI}]))", "{{node}} {{device}}")), "Bps"),
        timeseries(5, "RDMA receive", "Bytes received per node and device.",
                   targets((f"sum by (node, device) (rate(lens_rdma_port_receive_bytes_total"
                            f"{{{ND}}}[{RI}]))", "{{node}} {{device}}")), "Bps"),
        timeseries(6, "RDMA link utilisation", "Transmit rate over link rate, per port.",
                   targets((f"sum by (node, device, port) (rate("
                            f"lens_rdma_port_transmit_bytes_total{{{ND}}}[{RI}])) / "
                            f"sum by (node, device, port) "
                            f"(lens_rdma_port_rate_bytes_per_second{{{ND}}})",
                            "{{node}} {{device}}:{{port}}")), "percentunit", min_=0),
        timeseries(7, "RoCE congestion", "CNPs sent and handled, ECN-marked packets.",
                   targets((f"sum by (node, device, counter) (rate("
                            f'lens_rdma_port_hw_stat_total{{{ND}, counter=~"np_cnp_sent|'
                            f'rp_cnp_handled|np_ecn_marked_roce_packets"}}[{RI}]))',
                            "{{node}} {{device}} {{counter}}")), "pps"),
        timeseries(8, "RDMA retransmits and timeouts", "Sequence errors, ack timeouts.",
                   targets((f"sum by (node, device, counter) (rate("
                            f'lens_rdma_port_hw_stat_total{{{ND}, counter=~"local_ack_timeout_'
                            f'err|out_of_sequence|packet_seq_err|roce_adp_retrans"}}[{RI}]))',
                            "{{node}} {{device}} {{counter}}")), "pps"),
        table(9, "RDMA devices", "Firmware, board, GUID, PCI address and netdev per HCA.",
              targets((f"lens_rdma_device_info{{{ND}}}", "")), w=24,
              hide=("Value", "job", "instance")),
        row(101, "TCP flows (eBPF)"),
        timeseries(10, "TCP bytes sent by class", "Bytes applications wrote, by remote class.",
                   targets((f"sum by (class, direction) (rate(lens_tcp_flow_bytes_sent_total"
                            f"{{{NC}}}[{RI}]))", "{{class}} {{direction}}")), "Bps"),
        timeseries(11, "TCP bytes received by class", "Bytes applications read.",
                   targets((f"sum by (class, direction) (rate(lens_tcp_flow_bytes_received_total"
                            f"{{{NC}}}[{RI}]))", "{{class}} {{direction}}")), "Bps"),
        timeseries(12, "Top workloads by TCP bytes", "Sent plus received, ten busiest.",
                   targets((f"topk(10, sum by (node, workload) (rate("
                            f"lens_tcp_flow_bytes_sent_total{{{NC}}}[{RI}])) + "
                            f"sum by (node, workload) (rate(lens_tcp_flow_bytes_received_total"
                            f"{{{NC}}}[{RI}])))", "{{node}} {{workload}}")), "Bps"),
        timeseries(13, "Connections opened", "New connections by class and direction.",
                   targets((f"sum by (class, direction) (rate(lens_tcp_flow_connections_total"
                            f"{{{NC}}}[{RI}]))", "{{class}} {{direction}}")), "cps"),
        timeseries(14, "Retransmitted segments", "Over segments sent, by class.",
                   targets((f"sum by (class) (rate(lens_tcp_flow_retransmits_total{{{NC}}}"
                            f"[{RI}])) / sum by (class) (rate(lens_tcp_flow_segments_sent_total"
                            f"{{{NC}}}[{RI}]))", "{{class}}")), "percentunit", min_=0),
        heatmap(15, "Round-trip time", "Smoothed RTT samples by bucket.",
                targets((f"sum by (le) (rate(lens_tcp_flow_rtt_microseconds_bucket{{{NC}}}"
                         f"[{RI}]))", "{{le}}")), "µs", buckets=True),
        timeseries(16, "Round-trip time p99", "99th percentile srtt by class.",
                   targets((f"histogram_quantile(0.99, sum by (le, class) (rate("
                            f"lens_tcp_flow_rtt_microseconds_bucket{{{NC}}}[{RI}])))",
                            "{{class}}")), "µs"),
        table(17, "Top remotes", "Bytes per remote address (the busiest; the rest is other).",
              targets((f"topk(20, sum by (node, remote, class, direction) (rate("
                       f"lens_tcp_flow_remote_bytes_total{{{NC}}}[{RI}])))", "")), "Bps"),
        stat(18, "Flow map fill", "Fullest flow map (an LRU: full evicts).",
             targets((f"max(lens_netflow_flow_map_entries{{{NN}}} / "
                      f"lens_netflow_flow_map_capacity{{{NN}}})", "fill")), "percentunit", w=6),
        timeseries(19, "Probe losses", "Ring buffer events dropped, flows evicted.",
                   targets((f"sum by (node) (rate(lens_netflow_ringbuf_dropped_total{{{NN}}}"
                            f"[{RI}]))", "{{node}} events dropped"),
                           (f"sum by (node) (rate(lens_netflow_flows_evicted_total{{{NN}}}"
                            f"[{RI}]))", "{{node}} flows evicted")), "ops", w=18),
    ])

ALL = {
    "lens-cluster.json": cluster,
    "lens-node.json": node,
    "lens-workload.json": workload,
    "lens-training.json": training,
    "lens-network.json": network,
}
