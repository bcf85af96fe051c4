// The GPU utilisation heatmap: one row per node and GPU, one column per
// time step, cells coloured by utilisation (0..1; no sample: blank). Row
// labels are HTML (links to the node), the cells one canvas.
import {themeColor} from './charts.js';
import {h, note, route} from './dom.js';
import * as fmt from './format.js';

// Viridis at five stops: perceptually even, readable on light and dark.
const STOPS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98],
               [253, 231, 37]];
const ROW_PX = 16;

export function heatColor(v) {
  const x = Math.min(1, Math.max(0, v)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const t = x - i;
  const c = STOPS[i].map((a, k) => Math.round(a + (STOPS[i + 1][k] - a) * t));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

// The rows of the route's answer: [{node, gpu, values}], and whether any
// cell has a value.
function rowsOf(data) {
  const rows = [];
  let samples = 0;
  for (const n of (data && data.nodes) || []) {
    for (const g of n.gpus || []) {
      const values = g.values || [];
      samples += values.filter((v) => v !== null && v !== undefined).length;
      rows.push({node: n.node, gpu: g.gpu, values});
    }
  }
  return {rows, samples};
}

// The heatmap of `data` ({times, nodes: [{node, gpus: [{gpu, values}]}]}),
// or a note when it has no samples. `afterMount(fn)` runs fn once the
// element is in the document (the canvas is sized from its container).
export function heatmap(data, afterMount) {
  const times = (data && data.times) || [];
  const {rows, samples} = rowsOf(data);
  const long = times.length > 1 && times[times.length - 1] - times[0] > 86400;
  if (!rows.length || !times.length || !samples) {
    return note('No utilisation samples in this time range.');
  }
  const labels = h('div', {class: 'heatmap-labels'}, rows.map((r, i) =>
      h('div', {class: 'heatmap-row-label'},
        i === 0 || rows[i - 1].node !== r.node
            ? h('a', {href: route('nodes', r.node), class: 'heatmap-node'}, r.node)
            : h('span', {class: 'heatmap-node muted'}, ''),
        h('span', {class: 'heatmap-gpu', text: `GPU ${r.gpu}`}))));
  const canvas = h('canvas', {role: 'img',
                              'aria-label': `GPU utilisation of ${rows.length} GPUs ` +
                                            `over ${times.length} steps`});
  const tip = h('div', {class: 'heatmap-tip', hidden: true});
  const cells = h('div', {class: 'heatmap-cells'}, canvas, tip);
  const legend = h('canvas', {class: 'heatmap-legend-bar', width: 160, height: 10});
  const element = h('div', {class: 'heatmap'},
      h('div', {class: 'heatmap-grid'}, labels, cells, h('div'),
        h('div', {class: 'heatmap-axis'},
          h('span', {text: fmt.clock(times[0], long)}),
          h('span', {text: fmt.clock(times[Math.floor(times.length / 2)], long)}),
          h('span', {text: fmt.clock(times[times.length - 1], long)}))),
      h('div', {class: 'heatmap-legend'},
        h('span', {text: '0%'}), legend, h('span', {text: '100%'}),
        h('span', {class: 'heatmap-empty-key'}), h('span', {text: 'no sample'})));

  afterMount(() => {
    draw(canvas, cells, rows, times.length);
    const g = legend.getContext('2d');
    for (let x = 0; x < legend.width; ++x) {
      g.fillStyle = heatColor(x / (legend.width - 1));
      g.fillRect(x, 0, 1, legend.height);
    }
  });
  canvas.addEventListener('mousemove', (event) => {
    const box = canvas.getBoundingClientRect();
    const col = Math.floor((event.clientX - box.left) / box.width * times.length);
    const row = Math.floor((event.clientY - box.top) / ROW_PX);
    const r = rows[row];
    if (!r || col < 0 || col >= times.length) {
      tip.hidden = true;
      return;
    }
    const v = r.values[col];
    tip.textContent = `${r.node} · GPU ${r.gpu} · ${fmt.clock(times[col], true)} · ` +
                      (v === null || v === undefined ? 'no sample' : fmt.pct(v));
    tip.style.left = `${Math.min(event.clientX - box.left + 12, box.width - 220)}px`;
    tip.style.top = `${event.clientY - box.top + 12}px`;
    tip.hidden = false;
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
  return element;
}

function draw(canvas, container, rows, columns) {
  const width = Math.max(100, container.clientWidth);
  const height = rows.length * ROW_PX;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const g = canvas.getContext('2d');
  g.scale(dpr, dpr);
  const empty = themeColor('--heat-empty');
  const cell = width / columns;
  const gap = cell > 4 ? 1 : 0;
  rows.forEach((r, y) => {
    for (let i = 0; i < columns; ++i) {
      const v = r.values[i];
      const x0 = Math.floor(i * cell);
      const x1 = Math.floor((i + 1) * cell);
      g.fillStyle = v === null || v === undefined ? empty : heatColor(v);
      g.fillRect(x0, y * ROW_PX, Math.max(1, x1 - x0 - gap), ROW_PX - 1);
    }
  });
}
