// #/workloads/<uid> — one workload: status, pods, GPUs by node, training
// progress, runs and events.
import * as api from '../api.js';
import {badge, card, h, link, pageHead, stat, table} from '../dom.js';
import * as fmt from '../format.js';
import {loadTraining, trainingCard} from './training.js';

export function title(ctx) {
  return `Workload ${ctx.params.uid}`;
}

export async function render(ctx) {
  const uid = ctx.params.uid;
  const detail = await api.get(`/api/v1/workloads/${encodeURIComponent(uid)}`,
                               {signal: ctx.signal});
  const training = await loadTraining(uid, detail, ctx.signal);
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
           h('div', {class: 'grid two'},
             card('Pods', podTable(pods)),
             card('GPUs by node', gpuTable(pods))),
           card('Runs', runTable(detail.runs || []), {wide: true}),
           card('Events', eventTable(detail.events || []), {wide: true}));
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

function gpuTable(pods) {
  const byNode = new Map();
  for (const p of pods) {
    if (!p.node) continue;
    const row = byNode.get(p.node) || {node: p.node, gpus: 0, pods: 0};
    row.pods += 1;
    row.gpus += p.running ? p.gpuAllocated : 0;
    byNode.set(p.node, row);
  }
  return table([
    {label: 'Node', value: (r) => link(r.node, 'nodes', r.node)},
    {label: 'Pods', num: true, value: (r) => fmt.num(r.pods)},
    {label: 'GPUs allocated', num: true, value: (r) => fmt.num(r.gpus)},
  ], [...byNode.values()], {empty: 'No pod is placed on a node.', id: 'workload-gpus'});
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
