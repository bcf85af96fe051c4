// #/nodes/<name> — one node: facts, GPUs with their latest metrics and the
// containers holding them, per-GPU utilisation/memory/power charts, RDMA
// devices, containers and the device change log.
import * as api from '../api.js';
import {timeChart} from '../charts.js';
import {badge, card, facts, h, meter, note, pageHead, stat, table} from '../dom.js';
import * as fmt from '../format.js';

// The GPU series the node charts show, in this order, with their units.
const METRICS = [
  {metric: 'lens_gpu_utilization_ratio', title: 'Utilisation', format: fmt.pct,
   min: 0, max: 1},
  {metric: 'lens_gpu_memory_used_bytes', title: 'Memory used', format: fmt.bytes},
  {metric: 'lens_gpu_memory_utilization_ratio', title: 'Memory utilisation',
   format: fmt.pct, min: 0, max: 1},
  {metric: 'lens_gpu_power_watts', title: 'Power', format: fmt.watts},
  {metric: 'lens_gpu_temperature_celsius', title: 'Temperature', format: fmt.celsius},
];

export function title(ctx) {
  return `Node ${ctx.params.name}`;
}

export async function render(ctx) {
  const name = ctx.params.name;
  const base = `/api/v1/nodes/${encodeURIComponent(name)}`;
  const {from, to, step} = ctx.range;
  const [detail, metrics] = await Promise.all([
    api.get(base, {signal: ctx.signal}),
    api.optional(api.withQuery(`${base}/gpu-metrics`, {from, to, step}),
                 {signal: ctx.signal}),
  ]);
  const n = detail.node;
  const series = metrics.data ? metrics.data.metrics || [] : [];
  return h('div', {class: 'page'},
           pageHead(n.name, {
             badges: [badge(n.status), badge(n.agentState)],
             sub: [n.gpuVendor && n.gpuVendor.toUpperCase(), n.gpuModel, n.address]
                      .filter(Boolean).join(' · '),
             crumbs: [h('a', {href: '#/'}, 'Cluster'), n.name],
           }),
           h('div', {class: 'stats'},
             stat('GPUs allocated',
                  `${fmt.num(n.gpuAllocated)} / ${fmt.num(n.gpuAllocatable || n.gpuCount)}`,
                  `${fmt.num(n.gpuCount)} GPUs`),
             stat('Utilisation', fmt.pct(n.gpuUtilizationRatio), 'mean of its GPUs'),
             stat('CPUs', fmt.num(n.cpuCount), n.cpuModel || ''),
             stat('Memory', fmt.bytes(n.memoryBytes || null), 'host memory')),
           card('GPUs', gpuTable(detail, series), {wide: true, id: 'gpus'}),
           card('GPU metrics', metricCharts(ctx, metrics, series), {wide: true}),
           h('div', {class: 'grid two'},
             card('Node', nodeFacts(n)),
             card('RDMA devices', rdmaTable(detail.rdmaDevices || []))),
           card('Containers', containerTable(detail.containers || []), {wide: true}),
           card('Device changes', changeTable(detail.deviceChanges || []), {wide: true}));
}

function nodeFacts(n) {
  return facts([
    ['Address', n.address],
    ['CPU', n.cpuModel],
    ['Kernel', n.kernelVersion],
    ['OS', n.osImage],
    ['GPU driver', n.driverVersion],
    ['Kubelet', n.kubeletVersion],
    ['Runtime', n.containerRuntime],
    ['Agent seen', fmt.ago(n.agentSeenAt)],
    ['Updated', fmt.dateTime(n.updatedAt)],
  ]);
}

// metric -> gpu -> the last value in range.
function latestValues(series) {
  const latest = {};
  for (const m of series) {
    const byGpu = latest[m.metric] = {};
    for (const s of m.series || []) {
      const points = s.points || [];
      for (let i = points.length - 1; i >= 0; --i) {
        if (points[i][1] !== null) {
          byGpu[s.gpu] = points[i][1];
          break;
        }
      }
    }
  }
  return latest;
}

// The containers holding each GPU, matched by the device key the tracker
// recorded (serial, UUID, PCI address or index) or the PCI address.
function ownersOf(gpu, containers) {
  const keys = new Set([gpu.serial, gpu.uuid, gpu.bdf, String(gpu.index)]
                           .filter((k) => k !== '' && k !== undefined && k !== null));
  const owners = [];
  for (const c of containers) {
    const holds = (c.devices || []).some((d) => d.kind === 'gpu' &&
        (keys.has(d.deviceKey) || (d.bdf && d.bdf === gpu.bdf)));
    if (holds) {
      const pod = c.podName ? `${c.podNamespace ? c.podNamespace + '/' : ''}${c.podName}` : '';
      owners.push(pod ? `${pod} (${c.name})` : c.name || c.containerId.slice(0, 12));
    }
  }
  return owners.join(', ');
}

function gpuTable(detail, series) {
  const latest = latestValues(series);
  const value = (metric, gpu) => (latest[metric] || {})[String(gpu.index)];
  const containers = detail.containers || [];
  const columns = [
    {label: 'GPU', num: true, value: (g) => String(g.index)},
    {label: 'Model', value: (g) => g.model},
    {label: 'Serial', value: (g) => g.serial},
    {label: 'PCI', value: (g) => g.bdf},
    {label: 'NUMA', num: true, value: (g) => (g.numaNode >= 0 ? String(g.numaNode) : '')},
    {label: 'VRAM', num: true, value: (g) => (g.vramBytes ? fmt.bytes(g.vramBytes) : '')},
    {label: 'Utilisation', num: true, value: (g) => {
      const v = value('lens_gpu_utilization_ratio', g);
      return v === undefined ? '' : meter(v, fmt.pct(v));
    }},
    {label: 'Memory', num: true, value: (g) => {
      const used = value('lens_gpu_memory_used_bytes', g);
      if (used !== undefined) return fmt.bytes(used);
      const ratio = value('lens_gpu_memory_utilization_ratio', g);
      return ratio === undefined ? '' : fmt.pct(ratio);
    }},
    {label: 'Power', num: true, value: (g) => {
      const v = value('lens_gpu_power_watts', g);
      return v === undefined ? '' : fmt.watts(v);
    }},
    {label: 'Temp.', num: true, value: (g) => {
      const v = value('lens_gpu_temperature_celsius', g);
      return v === undefined ? '' : fmt.celsius(v);
    }},
    {label: 'Used by', value: (g) => ownersOf(g, containers)},
  ];
  return table(columns, detail.gpus || [], {empty: 'No GPUs reported on this node.',
                                            id: 'gpu-table'});
}

function metricCharts(ctx, metrics, series) {
  if (metrics.unavailable) {
    return note('GPU metrics are not available from this API server ' +
                `(${metrics.unavailable.message}, HTTP ${metrics.unavailable.status}).`);
  }
  const {from, to} = ctx.range;
  const charts = [];
  for (const spec of METRICS) {
    const m = series.find((x) => x.metric === spec.metric);
    if (!m || !(m.series || []).some((s) => (s.points || []).length)) continue;
    const lines = m.series.map((s) => ({label: `GPU ${s.gpu}`, points: s.points || []}));
    const points = lines.reduce((sum, s) => sum + s.points.length, 0);
    charts.push(h('div', {class: 'chart-cell'}, h('h3', {text: spec.title}),
        ctx.charts.slot(`node-${spec.metric}`, timeChart(lines, {
          from, to, yFormat: spec.format, yMin: spec.min, yMax: spec.max,
        }), `${spec.title}: ${lines.length} GPUs, ${points} points`)));
  }
  if (!charts.length) return note('No GPU samples in this time range.');
  return h('div', {class: 'grid two'}, charts);
}

function rdmaTable(devices) {
  return table([
    {label: 'Device', value: (d) => d.name},
    {label: 'Node GUID', value: (d) => d.nodeGuid},
    {label: 'Firmware', value: (d) => d.fwVersion},
    {label: 'Netdev', value: (d) => d.netdev},
    {label: 'PCI', value: (d) => d.bdf},
    {label: 'NUMA', num: true, value: (d) => (d.numaNode >= 0 ? String(d.numaNode) : '')},
  ], devices, {empty: 'No RDMA devices on this node.', id: 'rdma-table'});
}

function containerTable(containers) {
  return table([
    {label: 'Container', value: (c) => c.name || c.containerId.slice(0, 12),
     title: (c) => c.containerId},
    {label: 'Pod', value: (c) => (c.podName
        ? `${c.podNamespace ? c.podNamespace + '/' : ''}${c.podName}` : '')},
    {label: 'Image', value: (c) => c.image},
    {label: 'State', value: (c) => badge(c.state)},
    {label: 'GPUs', num: true,
     value: (c) => fmt.num((c.devices || []).filter((d) => d.kind === 'gpu').length)},
    {label: 'RDMA', num: true,
     value: (c) => fmt.num((c.devices || []).filter((d) => d.kind === 'rdma').length)},
    {label: 'Started', num: true, value: (c) => fmt.ago(c.startedAt || c.createdAt)},
  ], containers, {empty: 'No running containers on this node.', id: 'container-table'});
}

function changeTable(changes) {
  return table([
    {label: 'When', value: (c) => fmt.dateTime(c.at)},
    {label: 'Kind', value: (c) => c.kind},
    {label: 'Device', value: (c) => c.deviceKey},
    {label: 'Change', value: (c) => badge(c.change)},
    {label: 'Old serial', value: (c) => c.oldSerial},
    {label: 'New serial', value: (c) => c.newSerial},
  ], changes, {empty: 'No device changes recorded.', id: 'change-table'});
}
