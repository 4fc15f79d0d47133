// workspace.js: the workspace's analytics (every link), its top links, and
// the links without a click in 90 days (the links list's
// last_click_before filter), candidates for a clean-up.

import { call, query } from './api.js';
import { h, replace } from './dom.js';
import { analyticsSection } from './analytics.js';

const idleDays = 90;

function topLinkLabel(r) {
  const name = r.link ? `${r.link.domain}/${r.link.key}` : r.key;
  return h('a', { href: `#/links/${r.key}/view` }, name);
}

async function idleLinks() {
  const before = Math.floor(Date.now() / 1000) - idleDays * 86400;
  const page = await call('GET', `/links${query({ last_click_before: String(before), sort: '-created_at' })}`);
  const id = 'idle-title';
  return h('section', { class: 'card', 'aria-labelledby': id, 'data-test': 'idle-links' },
    h('h2', { id }, `No click in ${idleDays} days`),
    h('p', { class: 'help' }, `Links never clicked, or last clicked more than ${idleDays} days ago (${page.meta.total}), oldest first.`),
    page.data.length === 0 ? h('p', { class: 'empty' }, 'None: every link was clicked recently.') : h('ul', {},
      page.data.map((l) => h('li', { 'data-key': l.key },
        h('a', { href: `#/links/${l.id}/view` }, l.link),
        ` · ${l.last_click ? `last click ${new Date(l.last_click * 1000).toLocaleDateString()}` : 'never clicked'}`))),
    page.meta.total > page.data.length ? h('p', { class: 'help' }, `Showing ${page.data.length} of ${page.meta.total}.`) : null);
}

export async function workspacePage(main, ctx, params) {
  const slot = h('div', {}, h('p', { class: 'help' }, 'Loading analytics…'));
  const idle = h('div', {});
  replace(main, h('h1', { tabindex: '-1' }, 'Workspace analytics'), slot, idle);
  const title = main.querySelector('h1');
  if (title) title.focus();
  const [a, i] = await Promise.all([
    analyticsSection(ctx, '/analytics', params, '#/analytics', 'workspace', topLinkLabel),
    idleLinks(),
  ]);
  replace(slot, a);
  replace(idle, i);
}
