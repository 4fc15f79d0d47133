// analytics.js: the analytics of one link or of the workspace, for a range
// (24 h, 7 d, 30 d, 90 d or custom dates): clicks over time, visitors,
// bots apart, the top values of each dimension, and a CSV download. It
// asks the API's analytics endpoints only; the range lives in the page's
// address, so Back and a bookmark keep it.

import { call, query, ApiError } from './api.js';
import { h, replace, announce } from './dom.js';
import { timeChart, barList } from './charts.js';

const intervals = [['24h', '24 hours'], ['7d', '7 days'], ['30d', '30 days'], ['90d', '90 days']];

const groupings = [
  ['country', 'Countries'], ['city', 'Cities'], ['device', 'Devices'], ['browser', 'Browsers'], ['os', 'Operating systems'],
  ['referrer', 'Referrers'], ['utm_source', 'UTM sources'], ['utm_medium', 'UTM media'], ['utm_campaign', 'UTM campaigns'],
];

// range reads the range from the page's parameters: an interval, or start
// and end dates (YYYY-MM-DD, the end day included) in the viewer's zone.
export function range(params) {
  const start = params.get('start') || '';
  const end = params.get('end') || '';
  if (/^\d{4}-\d{2}-\d{2}$/.test(start) && /^\d{4}-\d{2}-\d{2}$/.test(end)) return { start, end };
  const iv = params.get('interval');
  return { interval: intervals.some(([v]) => v === iv) ? iv : '7d' };
}

// localDay is the start of day s (YYYY-MM-DD) in the viewer's zone.
function localDay(s, plusDays = 0) {
  const [y, m, d] = s.split('-').map(Number);
  return new Date(y, m - 1, d + plusDays);
}

function timezone() {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; } catch { return 'UTC'; }
}

// apiRange is the range as the API's parameters.
function apiRange(r) {
  const tz = timezone();
  if (r.interval) return { interval: r.interval, timezone: tz };
  return { start: localDay(r.start).toISOString(), end: localDay(r.end, 1).toISOString(), timezone: tz };
}

const intervalWords = { '24h': 'the last 24 hours', '7d': 'the last 7 days', '30d': 'the last 30 days', '90d': 'the last 90 days' };
const count = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

// rangeForm is the range's radios and dates. A new range goes into the
// page's address (a history entry: Back returns to the range before) and
// to show(r), which draws only the numbers: the form itself stays in the
// page, so the focus stays on the radio or button that changed the range,
// and an arrow pressed before the numbers came goes on from there.
function rangeForm(r, hashBase, show) {
  const chosen = r.interval || 'custom';
  const radios = [...intervals, ['custom', 'Custom']].map(([v, text]) => h('label', { class: 'choice' },
    h('input', { type: 'radio', name: 'interval', value: v, checked: v === chosen, 'data-test': `range-${v}` }), ` ${text}`));
  const today = new Date();
  const iso = (d) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
  const start = h('input', { id: 'range-start', name: 'start', type: 'date', value: r.start || iso(new Date(today.getTime() - 6 * 86400e3)) });
  const end = h('input', { id: 'range-end', name: 'end', type: 'date', value: r.end || iso(today) });
  const form = h('form', { class: 'filters range', 'data-test': 'range' },
    h('fieldset', {}, h('legend', {}, 'Range'), radios),
    h('div', { class: 'field' }, h('label', { for: 'range-start' }, 'From'), start),
    h('div', { class: 'field' }, h('label', { for: 'range-end' }, 'To (included)'), end),
    h('button', { type: 'submit', 'data-test': 'range-apply' }, 'Show'));
  const apply = (e) => {
    if (e) e.preventDefault();
    const v = new FormData(form).get('interval');
    let next;
    if (v !== 'custom') next = { interval: v };
    else if (!start.value || !end.value || start.value > end.value) {
      announce('Choose a start date on or before the end date.', 'error');
      start.focus();
      return;
    } else next = { start: start.value, end: end.value };
    // pushState, not location.hash: a hashchange would draw the whole
    // page again. Back fires hashchange, which does.
    history.pushState(null, '', `${hashBase}${query(next)}`);
    show(next);
  };
  form.addEventListener('submit', apply);
  for (const radio of form.querySelectorAll('input[type=radio]')) {
    radio.addEventListener('change', () => { if (radio.value !== 'custom') apply(); });
  }
  return form;
}

const sum = (rows, f) => rows.reduce((n, r) => n + r[f], 0);

function valueLabel(group) {
  return (r) => {
    if (r.key !== '') return r.key;
    return group === 'referrer' ? 'Direct (no referrer)' : 'Unknown';
  };
}

// csvDownload fetches the range's CSV for a grouping (the session cookie
// authenticates it) and saves it from a blob: URL, so the file is named and
// a failure is shown on the page rather than as a browser error page.
function csvDownload(path, r, name) {
  const group = h('select', { id: 'csv-group' },
    h('option', { value: 'timeseries' }, 'Clicks over time'),
    groupings.map(([v, text]) => h('option', { value: v }, text)),
    path === '/analytics' ? h('option', { value: 'link' }, 'Links') : null);
  const form = h('form', { class: 'inline', 'data-test': 'csv' },
    h('div', { class: 'field' }, h('label', { for: 'csv-group' }, 'CSV of'), group),
    h('button', { type: 'submit', 'data-test': 'csv-download' }, 'Download CSV'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const params = { ...apiRange(r), group_by: group.value, limit: group.value === 'timeseries' ? null : '1000' };
      const { blob } = await call('GET', `${path}${query(params)}`, undefined, { blob: true, accept: 'text/csv' });
      const url = URL.createObjectURL(blob);
      const a = h('a', { href: url, download: `${name}-${group.value}.csv`, class: 'sr-only' }, 'CSV');
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60e3);
      announce(`Downloaded ${name}-${group.value}.csv.`);
    } catch (err) {
      announce(`Could not download the CSV: ${err.message}`, 'error');
    }
  });
  return form;
}

// numbers fetches and draws the analytics of path for range r: the totals,
// the chart, the top lists and the CSV download. It returns null for an
// answer the user should read instead (no analytics store, a range the
// API refuses), with that message in its place.
async function numbers(path, r, name, linkLabel) {
  const base = apiRange(r);
  const get = (p) => call('GET', `${path}${query({ ...base, ...p })}`);
  let series; let withBots;
  try {
    [series, withBots] = await Promise.all([get({}), get({ exclude_bots: 'false' })]);
  } catch (e) {
    if (e instanceof ApiError && (e.status === 503 || e.status === 422)) {
      // 503: no analytics store; its message says how to turn it on.
      return { nodes: [h('p', { class: e.status === 503 ? 'notice' : 'error', 'data-test': 'analytics-off' }, e.message)], said: e.message };
    }
    throw e;
  }
  const groups = [...groupings, ...(linkLabel ? [['link', 'Top links']] : [])];
  const answers = await Promise.all(groups.map(([g]) => get({ group_by: g })));
  const clicks = sum(series.data, 'clicks');
  const visitors = sum(series.data, 'visitors');
  const bots = sum(withBots.data, 'clicks') - clicks;
  const said = `${count(clicks, 'click')}, ${count(visitors, 'unique visitor')} ${r.interval ? `in ${intervalWords[r.interval]}` : `from ${r.start} to ${r.end}`}.`;
  const title = `Clicks per ${series.granularity}, ${series.start ? new Date(series.start).toLocaleString() : 'since the first click'} to ${new Date(series.end).toLocaleString()} (${series.timezone})`;
  const bars = groups.map(([g, label], i) => barList(label, answers[i], g === 'link' ? linkLabel : valueLabel(g), g));
  return {
    said,
    nodes: [
      h('dl', { class: 'totals' },
        h('div', {}, h('dt', {}, 'Clicks'), h('dd', { 'data-test': 'total-clicks' }, String(clicks))),
        h('div', {}, h('dt', {}, 'Unique visitors'), h('dd', { 'data-test': 'total-visitors' }, String(visitors))),
        h('div', {}, h('dt', {}, 'Bots (not counted)'), h('dd', { 'data-test': 'total-bots' }, String(bots)))),
      h('p', { class: 'help' }, 'Visitors are counted per day: someone who clicks on two days counts twice. Bots (crawlers, link previews, scripts) are left out of every number but their own.'),
      timeChart(series, title),
      h('div', { class: 'bar-grid' }, linkLabel ? bars.slice(-1) : null, linkLabel ? bars.slice(0, -1) : bars),
      csvDownload(path, r, name),
    ],
  };
}

// analyticsSection draws the analytics of path ('/links/{id}/analytics' or
// '/analytics') for the range in params. hashBase is the page's address
// without parameters; name names the CSV files; linkLabel, when given,
// adds the top links. A new range redraws the numbers only, and only the
// last range asked for is drawn: an earlier range's answers that come
// later are dropped.
export async function analyticsSection(ctx, path, params, hashBase, name, linkLabel) {
  const data = h('div', { 'data-test': 'analytics-data' });
  let asked = 0;
  const show = async (r) => {
    const n = ++asked;
    data.setAttribute('aria-busy', 'true');
    let drawn;
    try {
      drawn = await numbers(path, r, name, linkLabel);
    } catch (e) {
      if (n !== asked) return;
      data.removeAttribute('aria-busy');
      if (e instanceof ApiError && e.status === 401) {
        announce('Your token was refused (expired or revoked); sign in again.', 'error');
        ctx.go('#/signin');
        return;
      }
      replace(data, h('p', { class: 'error' }, e.message));
      announce(`Could not load the analytics: ${e.message}`, 'error');
      return;
    }
    if (n !== asked) return;
    replace(data, drawn.nodes);
    data.removeAttribute('aria-busy');
    // The focus stays on the range's control: without a word a screen
    // reader user would not know the numbers below changed.
    announce(drawn.said);
  };
  const r = range(params);
  // The first range's numbers come with the section (a failure other
  // than 503 or 422 is the page's, as before).
  replace(data, (await numbers(path, r, name, linkLabel)).nodes);
  return h('section', { class: 'analytics', 'aria-labelledby': 'analytics-title' },
    h('h2', { id: 'analytics-title' }, 'Analytics'), rangeForm(r, hashBase, show), data);
}
