// Number, unit and time formatting. Fixed to en-US so what the page shows
// does not depend on the browser's locale (the headless test reads it).
// Every function returns '—' for null, undefined or a non-finite number.

const DASH = '—';
const integer = new Intl.NumberFormat('en-US', {maximumFractionDigits: 0});

function missing(v) {
  return v === null || v === undefined || !Number.isFinite(Number(v));
}

// 1234567 -> "1,234,567"; fraction digits only where asked.
export function num(v, digits = 0) {
  if (missing(v)) return DASH;
  if (digits === 0) return integer.format(v);
  return new Intl.NumberFormat('en-US', {
    minimumFractionDigits: 0,
    maximumFractionDigits: digits,
  }).format(v);
}

// A value with three significant digits at most ("2.5", "312", "0.0123").
export function short(v) {
  if (missing(v)) return DASH;
  const a = Math.abs(v);
  if (a >= 1000) return num(v);
  if (a >= 100) return num(v, 0);
  if (a >= 10) return num(v, 1);
  if (a >= 1) return num(v, 2);
  return num(v, 4);
}

// A 0..1 ratio as a percentage: 0.5 -> "50%", 0.4286 -> "42.9%".
export function pct(ratio) {
  if (missing(ratio)) return DASH;
  return num(ratio * 100, 1) + '%';
}

const BINARY = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
const DECIMAL = ['B/s', 'kB/s', 'MB/s', 'GB/s', 'TB/s'];

function scaled(v, base, units) {
  let i = 0;
  let x = Math.abs(v);
  while (x >= base && i < units.length - 1) {
    x /= base;
    ++i;
  }
  const digits = x >= 100 || i === 0 ? 0 : x >= 10 ? 1 : 2;
  return (v < 0 ? '-' : '') + num(x, digits) + ' ' + units[i];
}

// Memory: 206158430208 -> "192 GiB".
export function bytes(v) {
  return missing(v) ? DASH : scaled(Number(v), 1024, BINARY);
}

// Network rates, decimal as links are rated: 1.5e9 -> "1.5 GB/s".
export function rate(bytesPerSecond) {
  return missing(bytesPerSecond) ? DASH
                                 : scaled(Number(bytesPerSecond), 1000, DECIMAL);
}

export function watts(v) {
  return missing(v) ? DASH : num(v, v < 10 ? 1 : 0) + ' W';
}

export function celsius(v) {
  return missing(v) ? DASH : num(v, 0) + ' °C';
}

export function perSecond(v) {
  return missing(v) ? DASH : short(v) + '/s';
}

export function seconds(v) {
  if (missing(v)) return DASH;
  if (v < 1) return num(v * 1000, 0) + ' ms';
  if (v < 120) return num(v, 2) + ' s';
  return duration(v);
}

// 5400 -> "1h 30m".
export function duration(s) {
  if (missing(s)) return DASH;
  s = Math.max(0, Math.round(s));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

function pad(n) {
  return String(n).padStart(2, '0');
}

// Unix seconds -> "2023-11-14 22:13" in the browser's time zone.
export function dateTime(unixSeconds) {
  if (missing(unixSeconds) || unixSeconds <= 0) return DASH;
  const d = new Date(unixSeconds * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
         `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

// Unix seconds -> "22:13" (chart axes), with the date when `withDate`.
export function clock(unixSeconds, withDate = false) {
  if (missing(unixSeconds)) return DASH;
  const d = new Date(unixSeconds * 1000);
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return withDate ? `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${hm}` : hm;
}

// Unix seconds -> "5 min ago" relative to now.
export function ago(unixSeconds) {
  if (missing(unixSeconds) || unixSeconds <= 0) return DASH;
  const s = Date.now() / 1000 - unixSeconds;
  if (s < 0) return 'just now';
  if (s < 60) return `${Math.round(s)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}
