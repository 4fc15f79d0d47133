// linkpage.js: one link's page: its fields, its state in words and what to
// do about it, and its analytics.

import { call } from './api.js';
import { h, replace, copyText, formatTime } from './dom.js';
import { linkStates } from './states.js';
import { qrDialog } from './qr.js';
import { analyticsSection } from './analytics.js';

function field(label, value) {
  if (value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return null;
  return h('div', {}, h('dt', {}, label), h('dd', {}, value));
}

export async function linkPage(main, ctx, id, params) {
  const l = await call('GET', `/links/${id}`);
  const st = linkStates[l.state] || linkStates.pending;
  const utm = ['source', 'medium', 'campaign', 'term', 'content', 'name']
    .filter((k) => l[`utm_${k}`]).map((k) => `${k}=${l[`utm_${k}`]}`).join(', ');
  // Drawn first without analytics, so the fields show while they load.
  const analytics = h('div', { 'data-test': 'analytics-slot' }, h('p', { class: 'help' }, 'Loading analytics…'));
  replace(main,
    h('p', {}, h('a', { href: '#/links' }, '← Links')),
    h('div', { class: 'title-row' },
      h('h1', { tabindex: '-1', class: 'break' }, l.link),
      h('div', { class: 'actions' },
        // Named as in the list: "QR" alone is an abbreviation a screen
        // reader spells, and "Copy" does not say what.
        h('button', { type: 'button', 'aria-label': `Copy ${l.link}`, onclick: () => copyText(l.link, 'short link') }, 'Copy'),
        h('button', { type: 'button', 'data-test': 'qr', 'aria-label': `QR code of ${l.link}`, onclick: () => qrDialog(l) }, 'QR'),
        ctx.can('links', 'update') ? h('a', { class: 'button', href: `#/links/${l.id}`, 'data-test': 'edit', 'aria-label': `Edit ${l.link}` }, 'Edit') : null)),
    h('div', { class: `card state-card state-card-${l.state}`, 'data-test': 'link-state' },
      h('p', {}, 'State: ', h('span', { class: `state state-${l.state}` }, st.label)),
      l.state_reason ? h('p', { 'data-test': 'state-reason' }, l.state_reason) : null,
      h('p', { class: 'help', 'data-test': 'state-advice' }, st.advice)),
    h('dl', { class: 'fields card', 'data-test': 'link-fields' },
      field('Destination', h('span', { class: 'break' }, l.url)),
      field('Domain', l.domain),
      field('Key', l.key),
      field('Tags', l.tags.map((t) => h('span', { class: 'tag' }, t))),
      field('Clicks (all time)', String(l.clicks ?? 0)),
      field('Last click', l.last_click ? formatTime(new Date(l.last_click * 1000).toISOString()) : 'never'),
      field('iOS destination', l.ios),
      field('Android destination', l.android),
      field('UTM', utm),
      field('Expires', l.expires_at ? formatTime(l.expires_at) : null),
      field('After expiry', l.expired_redirect_url),
      field('Password', l.password ? 'required' : null),
      field('External id', l.external_id === null ? null : String(l.external_id)),
      field('Created', formatTime(l.created_at)),
      field('Changed', formatTime(l.updated_at))),
    analytics);
  const title = main.querySelector('h1');
  if (title) title.focus();
  replace(analytics, await analyticsSection(ctx, `/links/${l.id}/analytics`, params, `#/links/${l.id}/view`, l.key));
}
