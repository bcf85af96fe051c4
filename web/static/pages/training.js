// A workload's training progress: loss, TFLOP/s and tokens/s per GPU and
// step time over iterations, one line per run, with checkpoint and restart
// markers. Reads GET /api/v1/workloads/{uid}/training-series (downsampled
// by the server) and, where a server has no such route yet, the workload's
// iterations.
import * as api from '../api.js';
import {iterationChart} from '../charts.js';
import {card, h, note, stat} from '../dom.js';
import * as fmt from '../format.js';

const MAX_ITERATIONS = 1000;  // one page of the iterations route
const MAX_MARKER_LABELS = 12;

export const SERIES = [
  {key: 'loss', title: 'Loss', format: fmt.short, zero: false},
  {key: 'tflopsPerGpu', title: 'TFLOP/s per GPU', format: fmt.short},
  {key: 'tokensPerSecondPerGpu', title: 'Tokens/s per GPU', format: fmt.short},
  {key: 'stepSeconds', title: 'Step time', format: fmt.seconds},
];

// {runs: [{run, points: [{iteration, timestamp, loss, ...}]}], events,
// truncated}; `detail` is the workload route's answer (its events).
export async function loadTraining(uid, detail, signal) {
  const base = `/api/v1/workloads/${encodeURIComponent(uid)}`;
  const series = await api.optional(`${base}/training-series?points=500`, {signal});
  if (series.data) {
    return {runs: series.data.runs || [], events: series.data.events || [],
            truncated: false};
  }
  // The newest iterations, one record per (run, iteration).
  const page = await api.get(api.withQuery(`${base}/iterations`, {
    pageSize: MAX_ITERATIONS, sort: 'iteration', order: 'desc',
  }), {signal});
  const runs = new Map();
  for (const it of (page.items || []).slice().reverse()) {
    if (!runs.has(it.run)) runs.set(it.run, new Map());
    const points = runs.get(it.run);
    if (points.has(it.iteration)) continue;  // another rank's line
    const f = it.fields || {};
    points.set(it.iteration, {
      iteration: it.iteration,
      timestamp: it.timestamp,
      loss: f.loss,
      tflopsPerGpu: f.tflops_per_gpu,
      tokensPerSecondPerGpu: f.tokens_per_s_per_gpu,
      stepSeconds: f.elapsed_ms === undefined || f.elapsed_ms === null
          ? undefined : f.elapsed_ms / 1000,
    });
  }
  return {
    runs: [...runs.entries()].sort((a, b) => a[0] - b[0]).map(([run, points]) => ({
      run, points: [...points.values()].sort((a, b) => a.iteration - b.iteration),
    })),
    events: detail.events || [],
    truncated: page.total > (page.items || []).length,
  };
}

// Checkpoints (saved) and restarts (the start of every run after the first).
function markers(training) {
  const list = [];
  for (const e of training.events) {
    if (e.type === 'checkpoint_save_end' && e.iteration !== null && e.iteration !== undefined) {
      list.push({x: e.iteration, label: 'ckpt', color: '#3fb950', kind: 'checkpoint'});
    }
  }
  for (const r of training.runs.slice(1)) {
    if (r.points.length) {
      list.push({x: r.points[0].iteration, label: `restart · run ${r.run}`,
                 color: '#f0883e', dash: [2, 2], kind: 'restart', row: 1});
    }
  }
  if (list.length > MAX_MARKER_LABELS) {
    for (const m of list) if (m.kind === 'checkpoint') m.label = '';
  }
  return list;
}

function finite(v) {
  return v !== null && v !== undefined && Number.isFinite(v);
}

function latestPoint(training) {
  for (let i = training.runs.length - 1; i >= 0; --i) {
    const points = training.runs[i].points;
    if (points.length) return {run: training.runs[i].run, ...points[points.length - 1]};
  }
  return null;
}

// The training card: the latest values and one chart per series.
export function trainingCard(ctx, training) {
  const latest = latestPoint(training);
  if (!latest) {
    return card('Training progress', note('No training iterations recorded for this workload.'),
                {wide: true, id: 'training'});
  }
  const marks = markers(training);
  const checkpoints = marks.filter((m) => m.kind === 'checkpoint').length;
  const restarts = marks.filter((m) => m.kind === 'restart').length;
  const charts = [];
  for (const s of SERIES) {
    const lines = training.runs
        .map((r) => ({label: `run ${r.run}`,
                      points: r.points.filter((p) => finite(p[s.key]))
                                  .map((p) => [p.iteration, p[s.key]])}))
        .filter((l) => l.points.length);
    if (!lines.length) continue;
    const points = lines.reduce((n, l) => n + l.points.length, 0);
    const last = lines[lines.length - 1].points.at(-1);
    const caption = `${s.title}: ${lines.length} run${lines.length > 1 ? 's' : ''}, ` +
                    `${points} points, latest ${s.format(last[1])} at iteration ` +
                    `${fmt.num(last[0])}`;
    charts.push(h('div', {class: 'chart-cell'}, h('h3', {text: s.title}),
        ctx.charts.slot(`training-${s.key}`, iterationChart(lines, {
          yFormat: s.format, markers: marks, zero: s.zero !== false,
        }), caption)));
  }
  const summary = h('div', {class: 'stats compact'},
      stat('Iteration', fmt.num(latest.iteration), `run ${latest.run}`),
      stat('Loss', fmt.short(latest.loss)),
      stat('TFLOP/s per GPU', fmt.short(latest.tflopsPerGpu)),
      stat('Tokens/s per GPU', fmt.num(latest.tokensPerSecondPerGpu)),
      stat('Step time', fmt.seconds(latest.stepSeconds)),
      stat('Checkpoints', fmt.num(checkpoints),
           `${fmt.num(restarts)} restart${restarts === 1 ? '' : 's'}`));
  return card('Training progress', [
    summary,
    charts.length ? h('div', {class: 'grid two'}, charts)
                  : note('The iterations carry none of loss, throughput or step time.'),
    training.truncated
        ? note(`Showing the newest ${fmt.num(MAX_ITERATIONS)} iterations.`) : null,
  ], {wide: true, id: 'training'});
}
