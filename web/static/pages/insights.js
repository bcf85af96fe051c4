// The insight cards: idle allocated GPUs (overview) and a workload's goodput
// split with MFU (workload page). docs/insights.md.
import {badge, card, h, link, note, stat, table} from '../dom.js';
import * as fmt from '../format.js';

// The parts of a goodput breakdown, in time order, with their bar colours.
const PARTS = [
  {key: 'productiveSeconds', label: 'Productive', cls: 'gp-productive'},
  {key: 'schedulingSeconds', label: 'Scheduling', cls: 'gp-scheduling'},
  {key: 'startupSeconds', label: 'Start-up', cls: 'gp-startup'},
  {key: 'checkpointSeconds', label: 'Checkpoints', cls: 'gp-checkpoint'},
  {key: 'restartSeconds', label: 'Restart loss', cls: 'gp-restart'},
  {key: 'idleSeconds', label: 'Idle', cls: 'gp-idle'},
];

// One horizontal bar split by part, with a legend.
function splitBar(b, id) {
  const wall = b.wallSeconds || 0;
  // Widths through the CSSOM: the page's policy refuses style attributes.
  const segs = PARTS.filter((p) => (b[p.key] || 0) > 0).map((p) => {
    const seg = h('span', {class: `gp-seg ${p.cls}`,
                           title: `${p.label}: ${fmt.duration(b[p.key])} ` +
                                  `(${fmt.pct(b[p.key] / wall)})`});
    seg.style.width = `${(100 * b[p.key] / wall).toFixed(3)}%`;
    return seg;
  });
  const legend = PARTS.map((p) =>
    h('span', {class: 'gp-key'}, h('span', {class: `gp-dot ${p.cls}`}),
      `${p.label} ${fmt.duration(b[p.key] || 0)}`));
  return h('div', {class: 'gp', id},
           h('div', {class: 'gp-bar'}, ...segs),
           h('div', {class: 'gp-legend'}, ...legend));
}

export function goodputCard(answer) {
  if (answer.unavailable) {
    return card('Goodput', note(`Goodput is not available: ${answer.unavailable.message}.`),
                {wide: true, id: 'goodput'});
  }
  const g = answer.data;
  const t = g.total || {};
  if (!t.wallSeconds) {
    return card('Goodput', note('No time recorded for this workload yet.'),
                {wide: true, id: 'goodput'});
  }
  const mfuSub = g.peakTflops
      ? `${fmt.num(g.tflopsPerGpu, 1)} of ${fmt.num(g.peakTflops, 1)} TFLOP/s (${g.gpuModel})`
      : (g.gpuModel ? `no peak known for ${g.gpuModel}` : 'GPU model unknown');
  const runs = table([
    {label: 'Run', num: true, value: (r) => fmt.num(r.run)},
    {label: 'Iterations', num: true,
     value: (r) => `${fmt.num(r.firstIteration)} – ${fmt.num(r.lastIteration)}`},
    {label: 'Wall', num: true, value: (r) => fmt.duration(r.breakdown.wallSeconds)},
    {label: 'Goodput', num: true, value: (r) => fmt.pct(r.breakdown.goodput)},
    {label: 'Restart loss', num: true, value: (r) => fmt.duration(r.breakdown.restartSeconds)},
    {label: 'Redone', num: true, value: (r) => fmt.num(r.breakdown.iterationsRedone)},
    {label: 'TFLOP/s per GPU', num: true, value: (r) => fmt.num(r.tflopsPerGpu, 1)},
    {label: 'MFU', num: true, value: (r) => fmt.pct(r.mfu)},
  ], g.runs || [], {empty: 'No timed iterations.', id: 'goodput-runs'});
  return card('Goodput', h('div', {},
    h('div', {class: 'stats compact'},
      stat('Goodput', fmt.pct(t.goodput), `${fmt.duration(t.productiveSeconds)} productive ` +
           `of ${fmt.duration(t.wallSeconds)}`, {id: 'stat-goodput'}),
      stat('MFU', fmt.pct(g.mfu), mfuSub, {id: 'stat-mfu'}),
      stat('Restarts', fmt.num(g.restarts),
           `${fmt.num(t.iterationsRedone)} iterations redone`)),
    splitBar(t, 'goodput-bar'),
    runs), {wide: true, id: 'goodput'});
}

export function idleGpusCard(answer) {
  if (answer.unavailable) {
    return card('Idle allocated GPUs',
                note('No utilisation samples: idle GPUs are not available from this API ' +
                     `server (${answer.unavailable.message}).`), {id: 'idle-gpus'});
  }
  const d = answer.data;
  const idleNow = (d.workloads || []).reduce((n, w) => n + w.idleGpusNow, 0);
  const hours = (d.workloads || []).reduce((n, w) => n + w.gpuHours, 0);
  const caption = `${fmt.num(idleNow)} GPUs idle now, ${fmt.num(hours, 1)} GPU-hours idle ` +
                  `(under ${fmt.pct(d.thresholdRatio)} for ${fmt.duration(d.windowSeconds)} ` +
                  'or more)';
  return card('Idle allocated GPUs', h('div', {},
    h('p', {class: 'muted', id: 'idle-gpus-caption', text: caption}),
    table([
      {label: 'Workload', value: (w) => (w.workloadUid
          ? link(w.workloadName || w.workloadUid, 'workloads', w.workloadUid)
          : w.workloadName)},
      {label: 'Namespace', value: (w) => w.namespace},
      {label: 'Idle now', num: true, value: (w) => fmt.num(w.idleGpusNow)},
      {label: 'GPU-hours', num: true, value: (w) => fmt.num(w.gpuHours, 1)},
    ], d.workloads || [], {empty: 'No allocated GPU stayed idle in this range.',
                           id: 'idle-gpus-table'})), {id: 'idle-gpus'});
}

const EVIDENCE_NAMES = {
  gpu_throttle: 'throttling',
  gpu_temperature: 'temperature',
  gpu_power: 'power at cap',
  gpu_power_cap: 'power cap',
  gpu_ecc_errors: 'ECC errors',
  rdma_port_errors: 'RDMA port errors',
  rdma_congestion: 'RDMA congestion',
  tcp_retransmits: 'TCP retransmits',
};

function evidenceText(e) {
  const what = [EVIDENCE_NAMES[e.kind] || e.kind, e.name, e.device].filter(Boolean).join(' ');
  const where = e.gpu ? `GPU ${e.gpu}: ` : '';
  return `${where}${what} ${fmt.num(e.amount, 2)}`;
}

// The workload's slow GPUs and nodes over the page's range, with evidence.
export function stragglersCard(answer) {
  if (answer.unavailable) {
    return card('Stragglers', note('Stragglers need utilisation samples: not available from ' +
                                   `this API server (${answer.unavailable.message}).`),
                {wide: true, id: 'stragglers'});
  }
  const d = answer.data;
  const u = d.utilization;
  const caption = u
      ? `${fmt.num(d.gpus)} GPUs; median utilisation ${fmt.pct(u.median)}, ` +
        `MAD ${fmt.pct(u.mad)}`
      : `${fmt.num(d.gpus)} GPUs in range: too few to compare`;
  return card('Stragglers', h('div', {},
    h('p', {class: 'muted', id: 'stragglers-caption', text: caption}),
    table([
      {label: 'Scope', value: (s) => s.scope},
      {label: 'Node', value: (s) => link(s.node, 'nodes', s.node)},
      {label: 'GPU', value: (s) => (s.scope === 'node' ? (s.gpusOut || []).join(', ') : s.gpu)},
      {label: 'Score', num: true, value: (s) => fmt.num(s.score, 1)},
      {label: 'Utilisation', num: true,
       value: (s) => (s.findings[0] ? fmt.pct(s.findings[0].value) : '—')},
      {label: 'Evidence', value: (s) => (s.evidence.length
          ? s.evidence.map(evidenceText).join('; ') : 'no evidence found')},
    ], d.suspects || [], {empty: 'No GPU or node is out of line with the job.',
                          id: 'stragglers-table'})), {wide: true, id: 'stragglers'});
}

// GPUs and RDMA ports not healthy (or that changed) over the range, from the
// agents' health series.
export function deviceHealthCard(answer) {
  if (answer.unavailable) {
    return card('Device health', note('Device health needs the agents\' series: not ' +
                                      `available from this API server (${answer.unavailable.message}).`),
                {id: 'device-health'});
  }
  const d = answer.data;
  const devices = d.devices || [];
  const count = (s) => devices.filter((x) => x.state === s).length;
  const shown = devices.filter((x) => x.state !== 'healthy' || x.changes > 0);
  const caption = `${fmt.num(devices.length)} devices: ${fmt.num(count('unhealthy'))} ` +
                  `unhealthy, ${fmt.num(count('degraded'))} degraded; ` +
                  `${fmt.num((d.changes || []).length)} changes in range`;
  return card('Device health', h('div', {},
    h('p', {class: 'muted', id: 'device-health-caption', text: caption}),
    table([
      {label: 'Node', value: (x) => link(x.node, 'nodes', x.node)},
      {label: 'Device', value: (x) => (x.kind === 'gpu' ? `GPU ${x.device}`
                                                        : `${x.device} port ${x.port}`)},
      {label: 'Id', value: (x) => x.id},
      {label: 'State', value: (x) => badge(x.state)},
      {label: 'Since', num: true, value: (x) => fmt.ago(x.since),
       title: (x) => fmt.dateTime(x.since)},
      {label: 'Changes', num: true, value: (x) => fmt.num(x.changes)},
    ], shown, {empty: 'Every GPU and RDMA port stayed healthy in this range.',
               id: 'device-health-table'})), {id: 'device-health'});
}

const ISSUE_NAMES = {
  'nic-on-other-numa-node': 'NIC on another NUMA node',
  'nic-under-other-root-complex': 'NIC under another root complex',
  'cpus-off-gpu-numa-nodes': 'CPUs off the GPUs\' NUMA nodes',
  'gpus-without-local-cpus': 'GPUs without local CPUs',
};

// Running pods with GPUs, as the agents audit their placement: the flagged
// ones with where their GPUs sit; the node's /placement has the CPUs too.
export function placementCard(answer) {
  if (answer.unavailable) {
    return card('Placement', note('Placement needs the agents\' series: not available ' +
                                  `from this API server (${answer.unavailable.message}).`),
                {id: 'placement'});
  }
  const all = answer.data.pods || [];
  const flagged = all.filter((p) => (p.issues || []).length > 0);
  const where = (d) => `${d.kind === 'gpu' ? 'GPU' : d.kind} ${d.bdf}: NUMA ${d.numaNode}, ` +
                       `${d.rootComplex}${d.nic ? `, NIC ${d.nic} (${d.nicDistance})` : ''}`;
  return card('Placement', h('div', {},
    h('p', {class: 'muted', id: 'placement-caption',
            text: `${fmt.num(flagged.length)} of ${fmt.num(all.length)} pods with GPUs placed badly`}),
    table([
      {label: 'Node', value: (p) => link(p.node, 'nodes', p.node)},
      {label: 'Pod', value: (p) => `${p.namespace}/${p.pod}`},
      {label: 'Issues', value: (p) => p.issues
          .map((i) => `${ISSUE_NAMES[i.issue] || i.issue} (${fmt.num(i.flags)})`).join('; ')},
      {label: 'Devices', value: (p) => (p.devices || []).map(where).join('; ')},
    ], flagged, {empty: 'No pod is flagged: GPUs, NICs and CPUs sit together.',
                 id: 'placement-table'})), {id: 'placement'});
}
