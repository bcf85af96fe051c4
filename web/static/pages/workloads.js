// #/workloads — workloads, filtered by namespace, kind and status, sorted
// and paged by the API; every filter and the page live in the URL.
import * as api from '../api.js';
import {badge, card, h, link, table} from '../dom.js';
import * as fmt from '../format.js';

const PAGE_SIZE = 25;
const STATUSES = ['Running', 'Pending', 'Succeeded', 'Failed', 'Unknown'];
const SORTS = [
  ['createdAt:desc', 'Newest first'],
  ['createdAt:asc', 'Oldest first'],
  ['name:asc', 'Name'],
  ['gpuRequest:desc', 'Most GPUs'],
];

export function title() {
  return 'Workloads';
}

// The title and the filters, which apply on change (Enter or leaving a
// field), one URL each.
export function toolbar(ctx) {
  const q = ctx.query;
  const text = (name, label, placeholder) => h('label', {class: 'filter'}, label,
      h('input', {type: 'search', name, value: q.get(name) || '', placeholder,
                  onchange: (e) => ctx.setQuery({[name]: e.target.value.trim(),
                                                 page: ''})}));
  const select = (name, label, options) => {
    const el = h('select', {name, onchange: (e) => ctx.setQuery({[name]: e.target.value,
                                                                 page: ''})},
                 options.map(([value, text]) => h('option', {value}, text)));
    el.value = q.get(name) || options[0][0];
    return h('label', {class: 'filter'}, label, el);
  };
  return [
    h('div', {class: 'page-head'},
      h('div', {class: 'title-line'}, h('h1', {text: 'Workloads'}))),
    h('form', {class: 'toolbar', id: 'workload-filters', onsubmit: (e) => e.preventDefault()},
      text('namespace', 'Namespace', 'any'),
      text('kind', 'Kind', 'any (PyTorchJob, Job, …)'),
      select('status', 'Status', [['', 'Any'], ...STATUSES.map((s) => [s, s])]),
      select('sort', 'Sort', SORTS)),
  ];
}

export async function render(ctx) {
  const q = ctx.query;
  const page = Math.max(1, parseInt(q.get('page') || '1', 10) || 1);
  const [sort, order] = (q.get('sort') || SORTS[0][0]).split(':');
  const data = await api.get(api.withQuery('/api/v1/workloads', {
    namespace: q.get('namespace'),
    kind: q.get('kind'),
    status: q.get('status'),
    sort,
    order,
    pageNum: page,
    pageSize: PAGE_SIZE,
  }), {signal: ctx.signal});
  const items = data.items || [];
  const columns = [
    {label: 'Workload', value: (w) => link(w.name, 'workloads', w.uid)},
    {label: 'Namespace', value: (w) => w.namespace},
    {label: 'Kind', value: (w) => w.kind},
    {label: 'Status', value: (w) => badge(w.status)},
    {label: 'GPUs', num: true, value: (w) => fmt.num(w.gpuRequest)},
    {label: 'Active pods', num: true, value: (w) => fmt.num(w.activePods)},
    {label: 'Created', num: true, value: (w) => fmt.dateTime(w.createdAt)},
    {label: 'Duration', num: true, value: (w) => (w.createdAt
        ? fmt.duration((w.endedAt || Date.now() / 1000) - w.createdAt) : '')},
  ];
  const filtered = ['namespace', 'kind', 'status'].some((k) => q.get(k));
  return h('div', {class: 'page'},
           card(`${fmt.num(data.total)} workload${data.total === 1 ? '' : 's'}` +
                `${filtered ? ' matching' : ''}`,
                [table(columns, items, {
                   empty: filtered ? 'No workload matches these filters.'
                                   : 'No workloads recorded yet.',
                   id: 'workloads-table'}),
                 pager(ctx, page, data.total)],
                {wide: true}));
}

function pager(ctx, page, total) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  if (total <= PAGE_SIZE && page === 1) return null;
  const first = (page - 1) * PAGE_SIZE + 1;
  const last = Math.min(total, page * PAGE_SIZE);
  const go = (p) => {
    const query = new URLSearchParams(ctx.query);
    query.set('page', String(p));
    return `#/workloads?${query}`;
  };
  return h('div', {class: 'pager'},
           page > 1 ? h('a', {class: 'button', href: go(page - 1)}, '← Previous')
                    : h('span', {class: 'button disabled'}, '← Previous'),
           h('span', {class: 'muted',
                      text: total ? `${fmt.num(first)}–${fmt.num(last)} of ${fmt.num(total)}`
                                  : `page ${page}`}),
           page < pages ? h('a', {class: 'button', href: go(page + 1)}, 'Next →')
                        : h('span', {class: 'button disabled'}, 'Next →'));
}
