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

export async function linksPage(main, ctx, params) {
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
    h('button', { type: 'submit' }, 'Apply'));
  const apply = (e) => {
    if (e) e.preventDefault();
    const data = new FormData(filters);
    ctx.go(`#/links${query({ search: data.get('search').trim(), tag: data.get('tag'), state: data.get('state'), sort: data.get('sort') })}`);
  };
  filters.addEventListener('submit', apply);
  for (const s of filters.querySelectorAll('select')) s.addEventListener('change', apply);

  const rows = page.data.map((l) => linkRow(l, ctx));
  const table = page.data.length === 0
    ? h('p', { class: 'empty', 'data-test': 'no-links' }, f.search || f.tag || f.state ? 'No link matches.' : 'No links yet.')
    : h('div', { class: 'table-wrap' }, h('table', { 'data-test': 'links' },
      h('caption', {}, `${page.meta.total} link${page.meta.total === 1 ? '' : 's'}`),
      h('thead', {}, h('tr', {},
        ['Short link', 'Destination', 'Tags', 'State', 'Clicks', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows)));

  replace(main,
    h('div', { class: 'title-row' },
      h('h1', { tabindex: '-1' }, 'Links'),
      ctx.can('links', 'create') ? h('a', { class: 'button primary', href: '#/links/new', 'data-test': 'new-link' }, 'New link') : null),
    filters,
    table,
    pager(page.meta, f, ctx));
}

function linkRow(l, ctx) {
  const st = linkStates[l.state] || linkStates.pending;
  const actions = [
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
          ctx.go(location.hash || '#/links');
        } catch (e) {
          announce(`Could not delete ${l.link}: ${e.message}`, 'error');
        }
      },
    }, 'Delete'));
  }
  // data-label names each cell on narrow screens, where rows become cards.
  return h('tr', { 'data-key': l.key },
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
