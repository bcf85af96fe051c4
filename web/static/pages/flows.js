// #/flows — TCP traffic over the range from the netflow probes: rates by
// node, workload, class and direction, and the busiest remote addresses.
import * as api from '../api.js';
import {card, h, link, meter, note, stat, table} from '../dom.js';
import * as fmt from '../format.js';

const MAX_REMOTES = 50;

export function title() {
  return 'Network';
}

// The title and the node filter (applied on change).
export function toolbar(ctx) {
  return [
    h('div', {class: 'page-head'},
      h('div', {class: 'title-line'}, h('h1', {text: 'Network'})),
      h('p', {class: 'subtitle',
              text: `TCP traffic, mean rates over the ${ctx.range.label.toLowerCase()}`})),
    h('form', {class: 'toolbar', id: 'flow-filters', onsubmit: (e) => e.preventDefault()},
      h('label', {class: 'filter'}, 'Node',
        h('input', {type: 'search', name: 'node', value: ctx.query.get('node') || '',
                    placeholder: 'all nodes',
                    onchange: (e) => ctx.setQuery({node: e.target.value.trim()})}))),
  ];
}

function byRate(a, b) {
  return (b.bytesPerSecond || 0) - (a.bytesPerSecond || 0);
}

export async function render(ctx) {
  const {from, to} = ctx.range;
  const flows = await api.optional(api.withQuery('/api/v1/flows', {
    from, to, node: ctx.query.get('node'),
  }), {signal: ctx.signal});
  if (flows.unavailable) {
    return h('div', {class: 'page'},
             card('Flows', note('Flow data is not available from this API server ' +
                                `(${flows.unavailable.message}, HTTP ` +
                                `${flows.unavailable.status}). It needs lens-netflow on ` +
                                'the nodes and a time-series backend.'), {wide: true}));
  }
  const items = (flows.data.items || []).slice().sort(byRate);
  const remotes = (flows.data.remotes || []).slice().sort(byRate);
  const total = (dir) => items.filter((i) => i.direction === dir)
                              .reduce((n, i) => n + (i.bytesPerSecond || 0), 0);
  const retransmits = items.reduce((n, i) => n + (i.retransmitsPerSecond || 0), 0);
  const top = items.length ? items[0].bytesPerSecond || 0 : 0;
  const share = (i) => meter(top ? i.bytesPerSecond / top : 0, fmt.rate(i.bytesPerSecond),
                             {alert: false});
  return h('div', {class: 'page'},
           h('div', {class: 'stats'},
             stat('Egress', fmt.rate(total('egress')), 'bytes sent'),
             stat('Ingress', fmt.rate(total('ingress')), 'bytes received'),
             stat('Retransmits', fmt.perSecond(retransmits), 'TCP segments'),
             stat('Flow groups', fmt.num(items.length), 'node × workload × class')),
           card('Traffic by node and workload', table([
             {label: 'Node', value: (i) => link(i.node, 'nodes', i.node)},
             {label: 'Workload', value: (i) => i.workload || 'not a workload'},
             {label: 'Class', value: (i) => i.class},
             {label: 'Direction', value: (i) => i.direction},
             {label: 'Rate', num: true, value: share},
             {label: 'Retransmits', num: true,
              value: (i) => fmt.perSecond(i.retransmitsPerSecond)},
           ], items, {empty: 'No TCP traffic in this time range.', id: 'flows-table'}),
                {wide: true}),
           card(`Busiest remotes${remotes.length > MAX_REMOTES ? ` (top ${MAX_REMOTES})` : ''}`,
                table([
                  {label: 'Remote', value: (r) => r.remote},
                  {label: 'Node', value: (r) => link(r.node, 'nodes', r.node)},
                  {label: 'Class', value: (r) => r.class},
                  {label: 'Direction', value: (r) => r.direction},
                  {label: 'Rate', num: true, value: (r) => fmt.rate(r.bytesPerSecond)},
                ], remotes.slice(0, MAX_REMOTES),
                {empty: 'No remote addresses in this time range.', id: 'remotes-table'}),
                {wide: true}));
}
