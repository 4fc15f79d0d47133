// charts.js draws analytics answers: clicks over time as an SVG bar chart
// and groupings as bar lists. Everything is built with DOM calls (no
// library, no HTML parsing); bar widths are set through the CSSOM, which
// the Content-Security-Policy allows (it forbids style attributes).

import { h } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// bucketEnd is the end of the bucket starting at t (a Date) for the API's
// granularity.
function bucketEnd(t, granularity) {
  if (granularity === 'hour') return new Date(t.getTime() + 3600e3);
  if (granularity === 'day') return new Date(t.getTime() + 86400e3);
  const n = new Date(t.getTime());
  n.setUTCMonth(n.getUTCMonth() + 1);
  return n;
}

// bucketLabel is a bucket's start in words, at the granularity's precision.
export function bucketLabel(key, granularity) {
  const d = new Date(key);
  if (Number.isNaN(d.getTime())) return key;
  if (granularity === 'hour') return d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  if (granularity === 'day') return d.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
  return d.toLocaleDateString(undefined, { year: 'numeric', month: 'long' });
}

// timeChart draws answer (a timeseries answer) as bars on a time axis from
// its start to its end: buckets without clicks are absent from the answer
// and stay empty on the axis. A table of the same numbers follows for
// screen readers and for reading exact values.
export function timeChart(answer, title) {
  // As wide as the page when drawn (at most 720), so that the axis text
  // keeps its size on a phone rather than shrinking with the chart.
  const main = document.getElementById('main');
  const W = Math.round(Math.max(280, Math.min(720, main ? main.clientWidth - 32 : 720))); const H = 220; const left = 44; const right = 8; const top = 10; const bottom = 28;
  const rows = answer.data.map((r) => ({ ...r, t: new Date(r.key) }));
  const end = new Date(answer.end);
  let start = answer.start ? new Date(answer.start) : null;
  if (!start) start = rows.length ? rows[0].t : new Date(end.getTime() - 86400e3);
  // The axis runs to the last bucket's end, so that the current (partial)
  // bucket is as wide as the others.
  const axisEnd = rows.length ? new Date(Math.max(end.getTime(), bucketEnd(rows[rows.length - 1].t, answer.granularity).getTime())) : end;
  const span = Math.max(axisEnd.getTime() - start.getTime(), 1);
  const max = Math.max(1, ...rows.map((r) => r.clicks));
  const plotW = W - left - right; const plotH = H - top - bottom;
  const x = (t) => left + ((t.getTime() - start.getTime()) / span) * plotW;
  const y = (v) => top + plotH - (v / max) * plotH;

  const svg = s('svg', {
    viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-labelledby': 'chart-title', 'data-test': 'chart',
  }, s('title', { id: 'chart-title' }, title));
  // The y axis: 0, half and the maximum.
  for (const v of [...new Set([0, Math.round(max / 2), max])]) {
    svg.append(
      s('line', { x1: left, x2: W - right, y1: y(v), y2: y(v), class: 'grid' }),
      s('text', { x: left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' }, String(v)));
  }
  // The x axis: the range's first and last day.
  svg.append(
    s('text', { x: left, y: H - 8, class: 'axis' }, bucketLabel(start.toISOString(), answer.granularity === 'hour' ? 'hour' : 'day')),
    s('text', { x: W - right, y: H - 8, 'text-anchor': 'end', class: 'axis' }, bucketLabel(end.toISOString(), answer.granularity === 'hour' ? 'hour' : 'day')));
  for (const r of rows) {
    const x0 = Math.max(left, x(r.t));
    const x1 = Math.min(W - right, x(bucketEnd(r.t, answer.granularity)));
    const width = Math.max(1, x1 - x0 - (x1 - x0 > 4 ? 1 : 0));
    svg.append(s('rect', {
      x: x0.toFixed(2), y: y(r.clicks).toFixed(2), width: width.toFixed(2), height: (top + plotH - y(r.clicks)).toFixed(2),
      class: 'bar', 'data-clicks': r.clicks, 'data-key': r.key,
    }, s('title', {}, `${bucketLabel(r.key, answer.granularity)}: ${r.clicks} click${r.clicks === 1 ? '' : 's'}, ${r.visitors} visitor${r.visitors === 1 ? '' : 's'}`)));
  }
  const table = h('details', { class: 'chart-table' },
    h('summary', {}, 'Show the numbers'),
    rows.length === 0 ? h('p', { class: 'empty' }, 'No clicks in this range.') : h('table', { 'data-test': 'series' },
      h('thead', {}, h('tr', {}, ['Period', 'Clicks', 'Visitors'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows.map((r) => h('tr', {},
        h('td', {}, bucketLabel(r.key, answer.granularity)),
        h('td', { class: 'num' }, String(r.clicks)),
        h('td', { class: 'num' }, String(r.visitors)))))));
  return h('figure', { class: 'chart-wrap' }, svg, table);
}

// barList draws a grouping's rows as a list of labelled bars, the longest
// being the most clicks. label(row) names a row; it may answer an element.
export function barList(title, answer, label, testName) {
  const max = Math.max(1, ...answer.data.map((r) => r.clicks));
  const id = `bars-${testName}`;
  return h('section', { class: 'bars card', 'aria-labelledby': id, 'data-test': `bars-${testName}` },
    h('h3', { id }, title),
    answer.data.length === 0 ? h('p', { class: 'empty' }, 'No clicks.') : h('ol', {},
      answer.data.map((r) => {
        const bar = h('span', { class: 'bar-fill' });
        bar.style.width = `${(100 * r.clicks) / max}%`;
        return h('li', { 'data-key': r.key },
          h('span', { class: 'bar-label' }, label(r)),
          h('span', { class: 'bar-count', 'data-test': 'count' }, String(r.clicks)),
          h('span', { class: 'bar-track', 'aria-hidden': 'true' }, bar));
      })));
}
