// The dashboard's shell: hash routes (#/, #/nodes/<name>, #/workloads,
// #/workloads/<uid>, #/flows, each with ?range=1h and its filters, so a URL
// is shareable), the refresh every 15 s that keeps scroll position, filters
// and charts, loading and error states, the bearer-token form on 401, and
// the theme.
//
// A page module exports title(ctx) and async render(ctx) -> Node (its
// content, rebuilt from fresh data on every refresh), and optionally
// toolbar(ctx) -> Node or [Node] (its heading and filters, built once per
// navigation so a refresh never disturbs what the user is typing).
import * as api from './api.js';
import {applyTheme, ChartRegistry} from './charts.js';
import {append, h} from './dom.js';
import * as fmt from './format.js';
import {DEFAULT_RANGE, RANGES, windowFor} from './timerange.js';
import * as flows from './pages/flows.js';
import * as node from './pages/node.js';
import * as overview from './pages/overview.js';
import * as workload from './pages/workload.js';
import * as workloads from './pages/workloads.js';

const REFRESH_MS = 15000;
const THEME_KEY = 'lens.theme';

// Path patterns: ':name' captures one segment.
const ROUTES = [
  {pattern: [], page: overview, nav: 'overview'},
  {pattern: ['nodes'], page: overview, nav: 'overview'},
  {pattern: ['nodes', ':name'], page: node, nav: 'overview'},
  {pattern: ['workloads'], page: workloads, nav: 'workloads'},
  {pattern: ['workloads', ':uid'], page: workload, nav: 'workloads'},
  {pattern: ['flows'], page: flows, nav: 'flows'},
];

const el = {
  html: document.documentElement,
  view: document.getElementById('view'),
  banner: document.getElementById('banner'),
  toolbar: document.getElementById('toolbar'),
  content: document.getElementById('content'),
  status: document.getElementById('refresh-status'),
  range: document.getElementById('range'),
  theme: document.getElementById('theme-toggle'),
  signOut: document.getElementById('sign-out'),
};

const state = {
  path: null,        // the path of the page shown (without the query)
  generation: 0,     // renders started; a stale one's result is dropped
  abort: null,       // the AbortController of the render in flight
  busy: false,
  needsToken: false,
  readyOnce: false,
  charts: new ChartRegistry(),
};

// '#/nodes/a%2Fb?range=1h' -> {path: 'nodes/a%2Fb', segments: ['nodes',
// 'a/b'], query: URLSearchParams}.
function parseHash() {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path, query = ''] = hash.split('?');
  let segments;
  try {
    segments = path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    segments = null;  // a malformed %-escape
  }
  return {path, segments, query: new URLSearchParams(query)};
}

function match(segments) {
  if (!segments) return null;
  for (const r of ROUTES) {
    if (r.pattern.length !== segments.length) continue;
    const params = {};
    const ok = r.pattern.every((p, i) => {
      if (p.startsWith(':')) {
        params[p.slice(1)] = segments[i];
        return true;
      }
      return p === segments[i];
    });
    if (ok) return {...r, params};
  }
  return null;
}

// Replaces query parameters of the current URL (empty values removed); a
// new history entry, so Back undoes a filter.
function setQuery(updates) {
  const {path, query} = parseHash();
  for (const [k, v] of Object.entries(updates)) {
    if (v === null || v === undefined || v === '') {
      query.delete(k);
    } else {
      query.set(k, String(v));
    }
  }
  const q = query.toString();
  location.hash = `#/${path}${q ? '?' + q : ''}`;
}

function context(routeMatch, query, signal) {
  const afterMount = [];
  return {
    params: routeMatch.params,
    query,
    range: windowFor(query.get('range') || DEFAULT_RANGE),
    signal,
    charts: state.charts,
    afterMount: (fn) => afterMount.push(fn),
    mounted: afterMount,
    setQuery,
  };
}

function setBusy(busy) {
  state.busy = busy;
  el.view.classList.toggle('busy', busy);
  if (busy) el.status.textContent = 'Updating…';
}

function showBanner(text) {
  el.banner.textContent = text;
  el.banner.hidden = !text;
}

function errorText(e) {
  if (e instanceof api.ApiError) {
    if (e.status === 0) return e.message;
    return `${e.message} (HTTP ${e.status})`;
  }
  return `The page failed to render: ${e.message || e}`;
}

function errorState(e) {
  const notFound = e instanceof api.ApiError && e.status === 404;
  return h('div', {class: 'empty-state'},
           h('h1', {text: notFound ? 'Not found' : 'Something went wrong'}),
           h('p', {class: 'note error', text: errorText(e)}),
           h('p', null, h('a', {href: '#/'}, 'Back to the cluster overview')));
}

function tokenForm() {
  const input = h('input', {type: 'password', id: 'token-input', name: 'token',
                            autocomplete: 'off', required: true,
                            placeholder: 'Bearer token', 'aria-label': 'Bearer token'});
  const wrong = Boolean(api.token());
  return h('form', {id: 'token-form', class: 'card token-form',
                    onsubmit: (event) => {
                      event.preventDefault();
                      api.setToken(input.value.trim());
                      state.needsToken = false;
                      navigate();
                    }},
           h('h2', {text: 'Sign in to Lens'}),
           h('p', {text: wrong
               ? 'The saved token was not accepted (HTTP 401). Enter a valid one.'
               : 'This Lens API requires a bearer token (HTTP 401).'}),
           h('p', {class: 'muted', text: 'It is kept in this browser (localStorage) ' +
                                         'and sent as "Authorization: Bearer" to the API only.'}),
           h('div', {class: 'token-row'}, input,
             h('button', {type: 'submit', class: 'primary'}, 'Continue')));
}

// Renders the current route. kind: 'navigate' (a new path: loading state,
// fresh charts), 'update' (same path, other query: keep content while
// loading) or 'refresh' (the timer).
async function render(kind) {
  const {segments, query} = parseHash();
  const routeMatch = match(segments);
  const generation = ++state.generation;
  if (state.abort) state.abort.abort();
  const abort = new AbortController();
  state.abort = abort;
  syncChrome(routeMatch, query);

  if (!routeMatch) {
    el.toolbar.replaceChildren();
    el.content.replaceChildren(errorState(new api.ApiError(
        404, `no page at "${location.hash}"`, location.hash)));
    el.view.dataset.state = 'error';
    return;
  }
  const ctx = context(routeMatch, query, abort.signal);
  if (kind !== 'refresh') {
    el.toolbar.replaceChildren();
    if (routeMatch.page.toolbar) append(el.toolbar, [routeMatch.page.toolbar(ctx)]);
  }
  if (kind === 'navigate') {
    state.charts.clear();
    showBanner('');
    el.content.replaceChildren(h('p', {class: 'loading', text: 'Loading…'}));
    el.view.dataset.state = 'loading';
  }
  document.title = `${routeMatch.page.title(ctx)} · Lens`;
  setBusy(true);
  try {
    state.charts.begin();
    const content = await routeMatch.page.render(ctx);
    if (generation !== state.generation) return;
    el.content.replaceChildren(content);
    state.charts.mount();
    for (const fn of ctx.mounted) fn();
    state.charts.sweep();
    showBanner('');
    el.view.dataset.state = 'ready';
    el.view.dataset.page = routeMatch.nav;
    el.view.dataset.renders = String(Number(el.view.dataset.renders || 0) + 1);
    el.status.textContent = `Updated ${fmt.clock(Date.now() / 1000)}`;
    if (!state.readyOnce) {
      state.readyOnce = true;
      // Time to the first rendered data, read by the headless test.
      el.html.dataset.readyMs = performance.now().toFixed(1);
    }
  } catch (e) {
    if (generation !== state.generation || e.name === 'AbortError') return;
    if (e instanceof api.ApiError && e.status === 401) {
      state.needsToken = true;
      state.charts.clear();
      el.toolbar.replaceChildren();
      el.content.replaceChildren(tokenForm());
      el.view.dataset.state = 'auth';
      el.status.textContent = '';
      return;
    }
    if (!(e instanceof api.ApiError)) window.lensReportError(e);
    if (kind !== 'navigate' && el.view.dataset.state === 'ready') {
      // Keep the data shown; say that it is stale.
      showBanner(`Could not refresh: ${errorText(e)}`);
    } else {
      el.content.replaceChildren(errorState(e));
      el.view.dataset.state = 'error';
    }
    el.status.textContent = 'Update failed';
  } finally {
    if (generation === state.generation) setBusy(false);
  }
}

function navigate() {
  const {path} = parseHash();
  const kind = path === state.path ? 'update' : 'navigate';
  state.path = path;
  render(kind);
}

// The header: active section, range selector, sign-out button.
function syncChrome(routeMatch, query) {
  for (const a of document.querySelectorAll('.mainnav a')) {
    a.classList.toggle('active', Boolean(routeMatch) && a.dataset.nav === routeMatch.nav);
  }
  el.range.value = windowFor(query.get('range') || DEFAULT_RANGE).key;
  el.signOut.hidden = !api.token();
}

function setupChrome() {
  el.range.replaceChildren(...RANGES.map((r) =>
      h('option', {value: r.key}, r.label)));
  el.range.addEventListener('change', () => setQuery({range: el.range.value}));
  el.signOut.addEventListener('click', () => {
    api.setToken('');
    navigate();
  });
  el.theme.addEventListener('click', () => {
    const current = el.html.dataset.theme ||
        (window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
    const next = current === 'dark' ? 'light' : 'dark';
    el.html.dataset.theme = next;
    try {
      localStorage.setItem(THEME_KEY, next);
    } catch {
      // Not kept; this view still switches.
    }
    applyTheme();
    state.charts.clear();
    render('update');
  });
}

function setupTheme() {
  let saved = '';
  try {
    saved = localStorage.getItem(THEME_KEY) || '';
  } catch {
    // No storage: follow the system.
  }
  if (saved === 'dark' || saved === 'light') el.html.dataset.theme = saved;
  const media = window.matchMedia('(prefers-color-scheme: dark)');
  media.addEventListener('change', () => {
    if (el.html.dataset.theme) return;
    applyTheme();
    state.charts.clear();
    render('update');
  });
  applyTheme();
}

setupTheme();
setupChrome();
window.addEventListener('hashchange', navigate);
setInterval(() => {
  if (!document.hidden && !state.busy && !state.needsToken) render('refresh');
}, REFRESH_MS);
navigate();
