// #/ — the cluster: node and GPU totals, GPU allocation over the range, the
// utilisation heatmap (node x GPU x time), allocated GPUs left idle, device
// health, pods placed badly and every node.
import * as api from '../api.js';
import {timeChart} from '../charts.js';
import {badge, card, h, link, meter, note, stat, table} from '../dom.js';
import * as fmt from '../format.js';
import {heatmap} from '../heatmap.js';
import {deviceHealthCard, idleGpusCard, placementCard} from './insights.js';

const MAX_NODES = 1000;  // the API's largest page

export function title() {
  return 'Cluster';
}

export async function render(ctx) {
  const {from, to, step} = ctx.range;
  const signal = ctx.signal;
  const week = {from: Math.max(from, to - 7 * 86400), to};
  const [clusters, nodes, allocation, heat, idle, health, placement] = await Promise.all([
    api.get('/api/v1/clusters', {signal}),
    api.get(api.withQuery('/api/v1/nodes',
                          {pageSize: MAX_NODES, sort: 'name', order: 'asc'}), {signal}),
    api.get(api.withQuery('/api/v1/gpu-allocation', {from, to}), {signal}),
    api.optional(api.withQuery('/api/v1/gpu-heatmap', {from, to, step}), {signal}),
    // The insight routes answer at most 7 days: the range's last 7.
    api.optional(api.withQuery('/api/v1/insights/idle-gpus', week), {signal}),
    api.optional(api.withQuery('/api/v1/insights/device-health', week), {signal}),
    api.optional(api.withQuery('/api/v1/insights/placement', week), {signal}),
  ]);
  const cluster = clusters.items[0] || {nodes: {}, gpus: {}, workloads: {}};
  return h('div', {class: 'page'},
           h('div', {class: 'page-head'},
             h('div', {class: 'title-line'},
               h('h1', {text: `Cluster ${cluster.name || ''}`.trim()}))),
           summary(cluster),
           h('div', {class: 'grid two'},
             allocationCard(ctx, allocation),
             heatmapCard(ctx, heat)),
           h('div', {class: 'grid two'},
             idleGpusCard(idle),
             deviceHealthCard(health)),
           placementCard(placement),
           nodesCard(nodes));
}

function summary(c) {
  const n = c.nodes || {};
  const g = c.gpus || {};
  const running = (c.workloads || {}).running;
  return h('div', {class: 'stats'},
           stat('Nodes ready', `${fmt.num(n.ready)} / ${fmt.num(n.total)}`,
                `${fmt.num(n.stale)} with a stale agent`, {id: 'stat-nodes'}),
           stat('GPUs allocated', `${fmt.num(g.allocated)} / ${fmt.num(g.allocatable)}`,
                `${fmt.num(g.total)} GPUs in total`, {id: 'stat-gpus'}),
           stat('Allocation', fmt.pct(g.allocationRatio), 'of allocatable GPUs',
                {id: 'stat-allocation'}),
           stat('Utilisation', fmt.pct(g.utilizationRatio), 'GPU-weighted mean',
                {id: 'stat-utilization'}),
           h('a', {class: 'stat-link', href: '#/workloads?status=Running'},
             stat('Running workloads', fmt.num(running), 'see workloads',
                  {id: 'stat-workloads'})));
}

function allocationCard(ctx, data) {
  const {from, to} = ctx.range;
  const history = data.history || [];
  const now = data.now || {};
  const caption = `${history.length} samples in range; now ${fmt.num(now.allocated)} of ` +
                  `${fmt.num(now.allocatable)} GPUs allocated (${fmt.pct(now.ratio)})`;
  // The nodes' current counts continue the history to now.
  const points = history.map((p) => [p.at, p.allocated, p.allocatable]);
  if (points.length && now.allocatable !== undefined) {
    points.push([Math.min(to, Date.now() / 1000), now.allocated, now.allocatable]);
  }
  const body = history.length
      ? ctx.charts.slot('gpu-allocation', timeChart([
          {label: 'Allocated', stepped: true, points: points.map((p) => [p[0], p[1]])},
          {label: 'Allocatable', stepped: true, points: points.map((p) => [p[0], p[2]])},
        ], {from, to, yFormat: (v) => fmt.num(v)}), caption)
      : note(`No allocation history in this range. ${caption}.`);
  return card('GPU allocation', body);
}

function heatmapCard(ctx, heat) {
  let body;
  if (heat.unavailable) {
    body = note('No utilisation samples: the heatmap is not available from this ' +
                `API server (${heat.unavailable.message}, HTTP ${heat.unavailable.status}).`);
  } else {
    body = heatmap(heat.data, ctx.afterMount);
  }
  return card('GPU utilisation', body, {id: 'heatmap'});
}

function nodesCard(nodes) {
  const items = nodes.items || [];
  const more = nodes.total > items.length
      ? ` (showing the first ${fmt.num(items.length)})` : '';
  const columns = [
    {label: 'Node', value: (n) => link(n.name, 'nodes', n.name)},
    {label: 'Status', value: (n) => badge(n.status)},
    {label: 'GPU', value: (n) => [(n.gpuVendor || '').toUpperCase(), n.gpuModel]
                                    .filter(Boolean).join(' ')},
    {label: 'GPUs', num: true, value: (n) => fmt.num(n.gpuCount)},
    {label: 'Allocated', num: true,
     value: (n) => `${fmt.num(n.gpuAllocated)} / ${fmt.num(n.gpuAllocatable || n.gpuCount)}`},
    {label: 'Utilisation', num: true,
     value: (n) => meter(n.gpuUtilizationRatio, fmt.pct(n.gpuUtilizationRatio))},
    {label: 'Agent', value: (n) => badge(n.agentState)},
    {label: 'Updated', num: true, value: (n) => fmt.ago(n.updatedAt),
     title: (n) => fmt.dateTime(n.updatedAt)},
  ];
  return card(`Nodes · ${fmt.num(nodes.total)}${more}`,
              table(columns, items, {empty: 'No nodes reported yet.', id: 'nodes-table'}),
              {wide: true});
}
