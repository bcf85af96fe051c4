// Charts (Debian's Chart.js 3.9, the UMD build loaded before the app as
// window.Chart) that survive the page's refreshes: a ChartRegistry keeps
// each chart by key, so a refresh moves the existing canvas into the new
// DOM and updates its data instead of rebuilding it (no flicker, no lost
// hover state).
import {h} from './dom.js';
import * as fmt from './format.js';

// Distinguishable on light and dark backgrounds.
export const PALETTE = ['#4e8df5', '#f0883e', '#3fb950', '#d2a8ff', '#f85149',
                        '#2dd4bf', '#e3b341', '#ff7eb6', '#8b949e', '#a5d6ff'];

export function color(i) {
  return PALETTE[i % PALETTE.length];
}

// The colour a theme variable holds now, resolved (the variables use
// light-dark(), which only an element's computed colour resolves).
export function themeColor(name) {
  const probe = document.createElement('span');
  probe.style.color = `var(${name})`;
  document.body.append(probe);
  const value = getComputedStyle(probe).color;
  probe.remove();
  return value;
}

// Vertical marker lines (checkpoints, restarts): options.plugins.lensMarkers
// = {markers: [{x, label, color, dash, row}]}, the label on text row `row`
// (0 at the top) so neighbouring markers' labels do not overlap.
const markerPlugin = {
  id: 'lensMarkers',
  afterDatasetsDraw(chart, args, options) {
    const markers = (options && options.markers) || [];
    const x = chart.scales.x;
    const area = chart.chartArea;
    if (!x || !markers.length) return;
    const g = chart.ctx;
    g.save();
    for (const m of markers) {
      const px = x.getPixelForValue(m.x);
      if (!(px >= area.left && px <= area.right)) continue;
      g.strokeStyle = m.color || window.Chart.defaults.color;
      g.lineWidth = 1;
      g.setLineDash(m.dash || [4, 3]);
      g.beginPath();
      g.moveTo(px, area.top);
      g.lineTo(px, area.bottom);
      g.stroke();
      if (m.label) {
        g.setLineDash([]);
        g.fillStyle = m.color || window.Chart.defaults.color;
        g.font = '10px system-ui, sans-serif';
        g.fillText(m.label, px + 3, area.top + 10 + 12 * (m.row || 0));
      }
    }
    g.restore();
  },
};

let registered = false;

// Colours and fonts from the theme (CSS variables); call again after the
// theme changes, then rebuild the charts.
export function applyTheme() {
  const Chart = window.Chart;
  if (!Chart) return;
  if (!registered) {
    Chart.register(markerPlugin);
    registered = true;
  }
  Chart.defaults.color = themeColor('--muted');
  Chart.defaults.borderColor = themeColor('--grid');
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.font.size = 11;
}

export class ChartRegistry {
  constructor() {
    this.live = new Map();  // key -> {figure, chart}
    this.used = new Set();
    this.pending = [];
  }

  // Starts one render: slots claimed until sweep() are kept.
  begin() {
    this.used.clear();
    this.pending = [];
  }

  // The figure for chart `key` with `config` (a Chart.js config) and a
  // caption under it (a one-line summary of the data; also what the test
  // reads). `size`: '' or 'tall'.
  slot(key, config, caption, {size = ''} = {}) {
    this.used.add(key);
    const label = typeof caption === 'string' ? caption : '';
    const old = this.live.get(key);
    if (old && old.chart) {
      old.chart.data = config.data;
      old.chart.options = config.options;
      old.chart.update('none');
      old.caption.textContent = label;
      old.canvas.setAttribute('aria-label', label);
      return old.figure;
    }
    const canvas = h('canvas', {role: 'img', 'aria-label': label});
    const captionEl = h('figcaption', {text: label});
    const figure = h('figure', {class: 'chart', dataset: {chart: key}},
                     h('div', {class: `chart-box ${size}`}, canvas), captionEl);
    const entry = {figure, canvas, caption: captionEl, chart: null};
    this.live.set(key, entry);
    this.pending.push([entry, config]);
    return figure;
  }

  // Creates the charts of new slots; call once their figures are in the
  // document (Chart.js sizes a canvas from its parent).
  mount() {
    for (const [entry, config] of this.pending) {
      if (!window.Chart) {
        entry.figure.replaceChildren(h('p', {class: 'note error',
                                             text: 'Chart.js did not load.'}));
        continue;
      }
      entry.chart = new window.Chart(entry.canvas, config);
    }
    this.pending = [];
  }

  // Destroys the charts the last render did not claim.
  sweep() {
    for (const [key, entry] of this.live) {
      if (this.used.has(key)) continue;
      if (entry.chart) entry.chart.destroy();
      this.live.delete(key);
    }
  }

  clear() {
    this.used.clear();
    this.sweep();
  }
}

// One line per series: [{label, points: [[x, y], ...]}] -> Chart.js
// datasets, coloured by position (or series.color).
export function lineDatasets(series) {
  return series.map((s, i) => ({
    label: s.label,
    data: s.points.map(([x, y]) => ({x, y})),
    borderColor: s.color || color(i),
    backgroundColor: s.color || color(i),
    borderWidth: 1.5,
    pointRadius: s.points.length === 1 ? 3 : 0,
    pointHitRadius: 6,
    stepped: s.stepped || false,
    fill: false,
    spanGaps: false,
  }));
}

function baseOptions({yFormat, yMin, yMax, xTitle, xFormat, xMin, xMax,
                      markers = [], legend, zero = true}) {
  return {
    animation: false,
    responsive: true,
    maintainAspectRatio: false,
    parsing: {xAxisKey: 'x', yAxisKey: 'y'},
    interaction: {mode: 'nearest', axis: 'x', intersect: false},
    scales: {
      x: {
        type: 'linear',
        min: xMin,
        max: xMax,
        title: {display: Boolean(xTitle), text: xTitle},
        ticks: {maxTicksLimit: 8, callback: (v) => xFormat(v)},
        grid: {display: false},
      },
      y: {
        min: yMin,
        max: yMax,
        beginAtZero: zero,
        ticks: {maxTicksLimit: 6, callback: (v) => yFormat(v)},
      },
    },
    plugins: {
      legend: {display: legend, position: 'bottom',
               labels: {boxWidth: 10, boxHeight: 10}},
      tooltip: {
        callbacks: {
          title: (items) => items.length ? xFormat(items[0].parsed.x, true) : '',
          label: (item) => `${item.dataset.label}: ${yFormat(item.parsed.y)}`,
        },
      },
      lensMarkers: {markers},
    },
  };
}

// A chart over time: x in Unix seconds across [from, to].
export function timeChart(series, {yFormat = fmt.short, yMin, yMax, from, to,
                                   markers, zero = true} = {}) {
  return {
    type: 'line',
    data: {datasets: lineDatasets(series)},
    options: baseOptions({
      yFormat, yMin, yMax, markers, zero, xMin: from, xMax: to,
      xFormat: (v, long) => fmt.clock(v, long || (to - from) > 86400),
      legend: series.length > 1,
    }),
  };
}

// A chart over training iterations, with marker lines.
export function iterationChart(series, {yFormat = fmt.short, markers,
                                        zero = true} = {}) {
  return {
    type: 'line',
    data: {datasets: lineDatasets(series)},
    options: baseOptions({
      yFormat, markers, zero, xTitle: 'iteration',
      xFormat: (v, long) => (long ? 'iteration ' : '') + fmt.num(v),
      legend: series.length > 1,
    }),
  };
}
