// #/workloads/<uid> — one workload: status, pods, the GPUs its containers
// hold, training progress, goodput and MFU, stragglers, runs, training events
// and pod lifecycle.
import * as api from '../api.js';
import {badge, card, h, link, pageHead, stat, table} from '../dom.js';
import * as fmt from '../format.js';
import {goodputCard, stragglersCard} from './insights.js';
import {loadTraining, trainingCard} from './training.js';

export function title(ctx) {
  return `Workload ${ctx.params.uid}`;
}

export async function render(ctx) {
  const uid = ctx.params.uid;
  const detail = await api.get(`/api/v1/workloads/${encodeURIComponent(uid)}`,
                               {signal: ctx.signal});
  const {from, to} = ctx.range;
  const base = `/api/v1/workloads/${encodeURIComponent(uid)}`;
  const [training, goodput, stragglers] = await Promise.all([
    loadTraining(uid, detail, ctx.signal),
    api.optional(`${base}/goodput`, {signal: ctx.signal}),
    // The route answers at most 7 days: the range's last 7.
    api.optional(api.withQuery(`${base}/stragglers`,
                               {from: Math.max(from, to - 7 * 86400), to}),
                 {signal: ctx.signal}),
  ]);
  const w = detail.workload;
  const pods = detail.pods || [];
  const running = pods.filter((p) => p.running).length;
  const allocated = pods.reduce((n, p) => n + (p.running ? p.gpuAllocated : 0), 0);
  document.title = `${w.name} · Lens`;
  return h('div', {class: 'page'},
           pageHead(w.name, {
             badges: [badge(w.status)],
             sub: `${w.kind} in namespace ${w.namespace} · uid ${w.uid}`,
             crumbs: [h('a', {href: '#/workloads'}, 'Workloads'), w.namespace, w.name],
           }),
           h('div', {class: 'stats'},
             stat('GPUs requested', fmt.num(w.gpuRequest),
                  `${fmt.num(allocated)} allocated to running pods`),
             stat('Pods running', `${fmt.num(running)} / ${fmt.num(pods.length)}`),
             stat('Runs', fmt.num((detail.runs || []).length), 'restarts start a new run'),
             stat('Age', w.createdAt ? fmt.duration((w.endedAt || Date.now() / 1000) -
                                                   w.createdAt) : '—',
                  `created ${fmt.dateTime(w.createdAt)}`)),
           trainingCard(ctx, training),
           goodputCard(goodput),
           stragglersCard(stragglers),
           h('div', {class: 'grid two'},
             card('Pods', podTable(pods)),
             card('GPUs', gpuTable(detail.gpus || []))),
           card('Runs', runTable(detail.runs || []), {wide: true}),
           h('div', {class: 'grid two'},
             card('Training events', eventTable(detail.events || [])),
             card('Pod lifecycle', lifecycleTable(detail.lifecycle || []))));
}

function podTable(pods) {
  return table([
    {label: 'Pod', value: (p) => p.name},
    {label: 'Node', value: (p) => (p.node ? link(p.node, 'nodes', p.node) : '')},
    {label: 'Phase', value: (p) => badge(p.phase)},
    {label: 'GPUs', num: true, value: (p) => fmt.num(p.gpuAllocated)},
    {label: 'Restarts', num: true, value: (p) => fmt.num(p.restarts)},
    {label: 'Started', num: true, value: (p) => fmt.ago(p.startedAt || p.createdAt)},
  ], pods, {empty: 'No pods linked to this workload.', id: 'pods-table'});
}

// The GPUs the workload's containers hold, from the node inventory.
function gpuTable(gpus) {
  return table([
    {label: 'Node', value: (g) => link(g.node, 'nodes', g.node)},
    {label: 'GPU', num: true, value: (g) => fmt.num(g.gpuIndex)},
    {label: 'Model', value: (g) => g.model},
    {label: 'Serial', value: (g) => g.serial},
    {label: 'Pod', value: (g) => g.pod},
    {label: 'Container', value: (g) => g.container},
    {label: 'State', value: (g) => badge(g.containerState)},
  ], gpus, {empty: 'No container of this workload holds a GPU.', id: 'workload-gpus'});
}

function lifecycleTable(events) {
  return table([
    {label: 'When', value: (e) => fmt.dateTime(e.at)},
    {label: 'Pod', value: (e) => e.pod},
    {label: 'Event', value: (e) => e.type},
    {label: 'Phase', value: (e) => badge(e.phase)},
    {label: 'Restarts', num: true, value: (e) => fmt.num(e.restartCount)},
  ], events, {empty: 'No pod lifecycle events recorded.', id: 'lifecycle-table'});
}

function runTable(runs) {
  return table([
    {label: 'Run', num: true, value: (r) => fmt.num(r.run)},
    {label: 'Source', value: (r) => r.source},
    {label: 'First iteration', num: true, value: (r) => fmt.num(r.firstIteration)},
    {label: 'Last iteration', num: true, value: (r) => fmt.num(r.lastIteration)},
    {label: 'Iterations', num: true, value: (r) => fmt.num(r.iterations)},
    {label: 'Recorded', num: true, value: (r) => fmt.dateTime(r.createdAt)},
  ], runs, {empty: 'No training runs recorded.', id: 'runs-table'});
}

const EVENT_NAMES = {
  training_start: 'Training started',
  training_end: 'Training ended',
  checkpoint_save_start: 'Checkpoint save started',
  checkpoint_save_end: 'Checkpoint saved',
};

function eventTable(events) {
  return table([
    {label: 'Event', value: (e) => EVENT_NAMES[e.type] || e.type},
    {label: 'Run', num: true, value: (e) => fmt.num(e.run)},
    {label: 'Iteration', num: true, value: (e) => fmt.num(e.iteration)},
    {label: 'When', num: true, value: (e) => fmt.dateTime(e.timestamp)},
    {label: 'Duration', num: true, value: (e) => fmt.seconds(e.durationSeconds)},
    {label: 'Path', value: (e) => e.path},
  ], events, {empty: 'No training events recorded.', id: 'events-table'});
}
