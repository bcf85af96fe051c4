// Building DOM from data. Every string becomes a text node or an attribute
// value (never markup), so names from the API cannot inject HTML.

// h('a', {href: '#/', class: 'x'}, 'text', child, [more]): an element.
// Props: `class`, `text`, `dataset` (object), `on<event>` (listener), and
// any other attribute (true -> present, null/false/undefined -> absent).
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') {
      el.className = value;
    } else if (key === 'text') {
      el.textContent = String(value);
    } else if (key === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

// Appends nodes and strings (as text), skipping null/false, flattening arrays.
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

// A link inside the app: route segments are URI-encoded.
export function link(text, ...segments) {
  return h('a', {href: route(...segments)}, text);
}

// '#/nodes/<encoded name>', keeping the current time range.
export function route(...segments) {
  const range = new URLSearchParams(location.hash.split('?')[1] || '').get('range');
  const path = '#/' + segments.map((s) => encodeURIComponent(String(s))).join('/');
  return range ? `${path}?range=${encodeURIComponent(range)}` : path;
}

// A status word as a coloured pill: good / warn / bad / neutral by value.
const TONES = {
  ready: 'good', running: 'good', succeeded: 'good', ok: 'good', active: 'good',
  notready: 'bad', failed: 'bad', error: 'bad', stale: 'warn', pending: 'warn',
  unknown: 'neutral', paused: 'warn', created: 'neutral', exited: 'neutral',
  healthy: 'good', degraded: 'warn', unhealthy: 'bad',
};
export function badge(text) {
  const tone = TONES[String(text || '').toLowerCase()] || 'neutral';
  return h('span', {class: `badge ${tone}`}, text || 'unknown');
}

// A panel with a title (and optional right-side extra) and a body.
export function card(title, body, {extra = null, wide = false, id = null} = {}) {
  return h('section', {class: wide ? 'card wide' : 'card', id},
           h('header', {class: 'card-head'}, h('h2', {text: title}), extra),
           body);
}

// A big number with its label and a small line under it.
export function stat(label, value, sub = null, {id = null} = {}) {
  return h('div', {class: 'stat', id},
           h('div', {class: 'stat-label', text: label}),
           h('div', {class: 'stat-value', text: value}),
           sub === null ? null : h('div', {class: 'stat-sub', text: sub}));
}

// An informative line inside a card (missing data, an optional route
// that is not there): `tone` is 'info' or 'error'.
export function note(text, tone = 'info') {
  return h('p', {class: `note ${tone}`, text});
}

// A table. columns: [{label, value: (row) => string|Node, num: bool,
// title?: (row) => string}]; numeric columns are right-aligned.
export function table(columns, rows, {empty = 'Nothing to show', id = null,
                                      caption = null} = {}) {
  if (!rows.length) return note(empty);
  const head = h('tr', null, columns.map((c) =>
      h('th', {class: c.num ? 'num' : null, scope: 'col'}, c.label)));
  const body = rows.map((row) => h('tr', null, columns.map((c) => {
    const v = c.value(row);
    return h('td', {class: c.num ? 'num' : null, title: c.title ? c.title(row) : null},
             v === null || v === undefined || v === '' ? '—' : v);
  })));
  return h('div', {class: 'table-wrap'},
           h('table', {id},
             caption ? h('caption', {text: caption}) : null,
             h('thead', null, head), h('tbody', null, body)));
}

// Label/value pairs as a definition list (facts about one object).
export function facts(pairs) {
  return h('dl', {class: 'facts'}, pairs.map(([k, v]) => [
    h('dt', {text: k}),
    h('dd', null, v === null || v === undefined || v === '' ? '—' : v),
  ]));
}

// The page title line: a heading, badges and a subtitle.
export function pageHead(title, {badges = [], sub = null, crumbs = []} = {}) {
  return h('div', {class: 'page-head'},
           crumbs.length ? h('nav', {class: 'crumbs'},
                             crumbs.map((c, i) => [i ? ' / ' : null, c])) : null,
           h('div', {class: 'title-line'}, h('h1', {text: title}), badges),
           sub ? h('p', {class: 'subtitle', text: sub}) : null);
}

// A 0..1 ratio as a small bar and a text ("62.5%"); `alert` colours a bar
// of 90% or more as a warning (utilisation; not relative sizes).
export function meter(ratio, text, {alert = true} = {}) {
  const fill = h('span', {class: 'meter-fill'});
  const v = Number(ratio);
  const known = ratio !== null && ratio !== undefined && Number.isFinite(v);
  fill.style.width = `${known ? Math.round(Math.min(1, Math.max(0, v)) * 100) : 0}%`;
  if (alert && known && v >= 0.9) fill.classList.add('high');
  return h('span', {class: 'meter-cell'},
           h('span', {class: 'meter', 'aria-hidden': 'true'}, fill),
           h('span', {class: 'meter-text', text}));
}
