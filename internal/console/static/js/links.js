// links.js: the links list, with search, tag and state filters, sort and
// pages, and per link copy, QR, edit and delete (as /me allows).

import { call, query } from './api.js';
import { h, replace, announce, copyText, confirmDialog } from './dom.js';
import { linkStates, stateFilters } from './states.js';
import { qrDialog } from './qr.js';

const sorts = [
  ['created_at', 'Newest first'], ['-created_at', 'Oldest first'],
  ['updated_at', 'Recently changed'], ['key', 'Key A–Z'], ['-key', 'Key Z–A'],
  ['clicks', 'Most clicks'], ['last_click', 'Recently clicked'],
];

function select(id, label, value, options) {
  return h('div', { class: 'field' },
    h('label', { for: id }, label),
    h('select', { id, name: id.replace(/^f-/, '') },
      options.map(([v, text]) => h('option', { value: v, selected: v === value ? true : null }, text))));
}

// refocus is the id of the filter control that applied the filters: the
// page drawn with them gives it the focus back, so a keyboard user goes on
// where they were (an arrow key on a select applies at once, and the next
// arrow must still reach it), and the status region says how many match.
let refocus = null;

// after, when set, finds what gets the focus once the list is drawn again
// after a change (a deletion, a bulk action): without it the focus would
// fall to the title, far from where the keyboard user was working.
let after = null;

// plural is "n link" or "n links".
const plural = (n) => `${n} link${n === 1 ? '' : 's'}`;

export async function linksPage(main, ctx, params) {
  const focusId = refocus;
  const focusAfter = after;
  refocus = null;
  after = null;
  const f = {
    search: params.get('search') || '',
    tag: params.get('tag') || '',
    state: params.get('state') || '',
    sort: params.get('sort') || '',
    page: params.get('page') || '',
  };
  const [page, tags] = await Promise.all([
    call('GET', `/links${query(f)}`),
    call('GET', '/tags?sort=count').catch(() => ({ data: [] })),
  ]);
  const tagOptions = [['', 'Any tag'], ...tags.data.map((t) => [t.name, `${t.name} (${t.links_count})`])];
  if (f.tag && !tags.data.some((t) => t.name === f.tag)) tagOptions.push([f.tag, f.tag]);

  const filters = h('form', { class: 'filters', role: 'search', 'data-test': 'filters' },
    h('div', { class: 'field grow' },
      h('label', { for: 'f-search' }, 'Search'),
      h('input', { id: 'f-search', name: 'search', type: 'search', value: f.search, placeholder: 'key, URL or domain' })),
    select('f-tag', 'Tag', f.tag, tagOptions),
    select('f-state', 'State', f.state, [['', 'Any state'], ...stateFilters.map((s) => [s, linkStates[s].label])]),
    select('f-sort', 'Sort', f.sort, sorts),
    h('button', { type: 'submit', id: 'f-apply' }, 'Apply'));
  const apply = (e) => {
    if (e) e.preventDefault();
    refocus = filters.contains(document.activeElement) ? document.activeElement.id : null;
    const data = new FormData(filters);
    ctx.go(`#/links${query({ search: data.get('search').trim(), tag: data.get('tag'), state: data.get('state'), sort: data.get('sort') })}`);
  };
  filters.addEventListener('submit', apply);
  for (const s of filters.querySelectorAll('select')) s.addEventListener('change', apply);

  const selecting = ctx.can('links', 'update') || ctx.can('links', 'delete');
  const rows = page.data.map((l) => linkRow(l, ctx, selecting));
  const table = page.data.length === 0
    ? h('p', { class: 'empty', 'data-test': 'no-links' }, f.search || f.tag || f.state ? 'No link matches.' : 'No links yet.')
    : h('div', { class: 'table-wrap' }, h('table', { 'data-test': 'links' },
      h('caption', {}, `${page.meta.total} link${page.meta.total === 1 ? '' : 's'}`),
      h('thead', {}, h('tr', {},
        selecting ? h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Select')) : null,
        ['Short link', 'Destination', 'Tags', 'State', 'Clicks', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows)));

  replace(main,
    h('div', { class: 'title-row' },
      h('h1', { tabindex: '-1' }, 'Links'),
      ctx.can('links', 'create') ? h('a', { class: 'button primary', href: '#/links/new', 'data-test': 'new-link' }, 'New link') : null),
    filters,
    selecting && page.data.length > 0 ? bulkBar(ctx) : null,
    table,
    pager(page.meta, f, ctx));
  const back = focusId && document.getElementById(focusId);
  if (back) {
    back.focus();
    const n = page.meta.total;
    announce(`${n} link${n === 1 ? ' matches' : 's match'}.`);
  }
  const next = focusAfter && focusAfter(main);
  if (next) next.focus();
}

// rowAt finds the first control of the list's row i once drawn again, or
// of the row before when i is past the end (none: the title gets it): a
// deleted link's place in the list, where a keyboard user goes on.
function rowAt(i) {
  return (main) => {
    const rows = main.querySelectorAll('table[data-test=links] tbody tr');
    const row = rows[Math.min(i, rows.length - 1)];
    return row ? row.querySelector('input, a[href], button') : null;
  };
}

// stayOn finds the bulk bar's button that acted, drawn again.
function stayOn(test) {
  return (main) => main.querySelector(`[data-test=${test}]`);
}

// bulkCount updates the current page's selection count; one listener for
// every page drawn.
let bulkCount = () => {};
document.addEventListener('change', (e) => {
  if (e.target instanceof HTMLInputElement && e.target.dataset.test === 'select') bulkCount();
});

// bulkBar acts on the selected rows through the bulk API: add or remove
// a tag (update), delete (delete, after a confirmation).
function bulkBar(ctx) {
  const tag = h('input', { id: 'bulk-tag', type: 'text', 'aria-describedby': 'bulk-count' });
  const count = h('span', { id: 'bulk-count', 'data-test': 'bulk-count' }, '0 selected');
  const selected = () => [...document.querySelectorAll('input[data-test=select]:checked')].map((c) => c.value);
  bulkCount = () => { count.textContent = `${selected().length} selected`; };
  const report = (answer, done, button) => {
    const failed = answer.data.filter((i) => i.status >= 300);
    if (failed.length) announce(`${done}; ${failed.length} failed: ${failed[0].message}`, 'error');
    else announce(`${done}.`);
    after = stayOn(button);
    ctx.go(location.hash || '#/links');
  };
  const act = async (what) => {
    const ids = selected();
    if (ids.length === 0) { announce('Select links first.', 'error'); return; }
    try {
      if (what === 'delete') {
        if (!await confirmDialog(`Delete ${plural(ids.length)}?`, 'Delete')) return;
        report(await call('DELETE', '/links/bulk', { ids }), `Deleted ${plural(ids.length)}`, 'bulk-delete');
        return;
      }
      const t = tag.value.trim();
      if (!t) { announce('Enter a tag.', 'error'); tag.focus(); return; }
      const body = { ids, [what === 'add' ? 'add_tags' : 'remove_tags']: [t] };
      report(await call('PATCH', '/links/bulk', body),
        what === 'add' ? `Added the tag ${t} to ${plural(ids.length)}` : `Removed the tag ${t} from ${plural(ids.length)}`,
        `bulk-${what}-tag`);
    } catch (e) {
      announce(e.message, 'error');
    }
  };
  return h('div', { class: 'bulk', role: 'group', 'aria-label': 'Selected links', 'data-test': 'bulk' },
    count,
    ctx.can('links', 'update') ? [
      h('label', { for: 'bulk-tag' }, 'Tag'), tag,
      h('button', { type: 'button', 'data-test': 'bulk-add-tag', onclick: () => act('add') }, 'Add tag'),
      h('button', { type: 'button', 'data-test': 'bulk-remove-tag', onclick: () => act('remove') }, 'Remove tag'),
    ] : null,
    ctx.can('links', 'delete') ? h('button', { type: 'button', class: 'danger', 'data-test': 'bulk-delete', onclick: () => act('delete') }, 'Delete selected') : null);
}

function linkRow(l, ctx, selecting) {
  const st = linkStates[l.state] || linkStates.pending;
  const actions = [
    h('a', { class: 'button', href: `#/links/${l.id}/view`, 'data-test': 'view', 'aria-label': `Details and analytics of ${l.link}` }, 'Details'),
    h('button', { type: 'button', 'data-test': 'copy', 'aria-label': `Copy ${l.link}`, onclick: () => copyText(l.link, 'short link') }, 'Copy'),
    h('button', { type: 'button', 'data-test': 'qr', 'aria-label': `QR code of ${l.link}`, onclick: () => qrDialog(l) }, 'QR'),
  ];
  if (ctx.can('links', 'update')) {
    actions.push(h('a', { class: 'button', href: `#/links/${l.id}`, 'data-test': 'edit', 'aria-label': `Edit ${l.link}` }, 'Edit'));
  }
  if (ctx.can('links', 'delete')) {
    actions.push(h('button', {
      type: 'button', class: 'danger', 'data-test': 'delete', 'aria-label': `Delete ${l.link}`,
      onclick: async () => {
        if (!await confirmDialog(`Delete ${l.link}? Visitors will get the domain's not-found page.`, 'Delete')) return;
        try {
          await call('DELETE', `/links/${l.id}`);
          announce(`Deleted ${l.link}.`);
          const row = document.querySelector(`table[data-test=links] tbody tr[data-key="${CSS.escape(l.key)}"]`);
          after = rowAt(row ? row.sectionRowIndex : 0);
          ctx.go(location.hash || '#/links');
        } catch (e) {
          announce(`Could not delete ${l.link}: ${e.message}`, 'error');
        }
      },
    }, 'Delete'));
  }
  // data-label names each cell on narrow screens, where rows become cards.
  return h('tr', { 'data-key': l.key },
    selecting ? h('td', {}, h('input', { type: 'checkbox', value: l.id, 'data-test': 'select', 'aria-label': `Select ${l.link}` })) : null,
    h('td', { 'data-label': 'Short link' }, h('a', { href: l.link, rel: 'noreferrer', target: '_blank' }, l.link)),
    h('td', { class: 'url', 'data-label': 'Destination' }, l.url),
    h('td', { 'data-label': 'Tags' }, l.tags.map((t) => h('span', { class: 'tag' }, t))),
    h('td', { 'data-label': 'State' }, h('span', { class: `state state-${l.state}`, title: l.state_reason || st.advice }, st.label),
      l.state === 'active' ? null : h('p', { class: 'help' }, st.advice)),
    h('td', { class: 'num', 'data-label': 'Clicks' }, String(l.clicks ?? 0)),
    h('td', { class: 'actions' }, actions));
}

// pager draws the contract's pages (meta.links), kept in the filters.
function pager(meta, f, ctx) {
  if (meta.last_page <= 1) return null;
  const to = (n) => `#/links${query({ ...f, page: String(n) })}`;
  const items = [];
  items.push(meta.current_page > 1 ? h('a', { href: to(meta.current_page - 1), rel: 'prev' }, 'Previous') : null);
  for (const e of meta.links.slice(1, -1)) {
    if (e.url === null) items.push(h('span', { 'aria-hidden': 'true' }, '…'));
    else if (e.active) items.push(h('span', { 'aria-current': 'page', class: 'current' }, e.label));
    else items.push(h('a', { href: to(e.label), 'aria-label': `Page ${e.label}` }, e.label));
  }
  items.push(meta.current_page < meta.last_page ? h('a', { href: to(meta.current_page + 1), rel: 'next' }, 'Next') : null);
  void ctx;
  return h('nav', { class: 'pager', 'aria-label': 'Pages' }, items);
}
