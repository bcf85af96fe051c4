// The time ranges the pages offer (kept in the URL as ?range=1h) and the
// query window and step each one asks the API for.

export const RANGES = [
  {key: '15m', label: 'Last 15 minutes', seconds: 900, step: 15},
  {key: '1h', label: 'Last hour', seconds: 3600, step: 60},
  {key: '6h', label: 'Last 6 hours', seconds: 6 * 3600, step: 300},
  {key: '24h', label: 'Last 24 hours', seconds: 86400, step: 900},
  {key: '7d', label: 'Last 7 days', seconds: 7 * 86400, step: 3600},
];
export const DEFAULT_RANGE = '1h';

// The range named `key` (the default for an unknown one) as a window ending
// now: {key, label, seconds, step, from, to} in Unix seconds, `from` and
// `to` on multiples of the step so refreshes ask for aligned windows.
export function windowFor(key, nowSeconds = Date.now() / 1000) {
  const r = RANGES.find((x) => x.key === key) ||
            RANGES.find((x) => x.key === DEFAULT_RANGE);
  const to = Math.ceil(nowSeconds / r.step) * r.step;
  return {...r, from: to - r.seconds, to};
}
