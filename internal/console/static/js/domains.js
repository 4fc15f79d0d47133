// domains.js: the workspace's domains, the DNS record a pending one must
// publish (copyable), when it was last checked and its HTTPS state; create
// and delete as /me allows.

import { call, query, ApiError } from './api.js';
import { h, replace, announce, copyText, confirmDialog, formatTime } from './dom.js';

const httpsWords = {
  ready: 'Certificate valid',
  pending: 'Not checked yet',
  route_pending: 'Waiting for the domain to be active',
  certificate_pending: 'Certificate being issued',
  certificate_missing: 'No certificate yet',
  certificate_invalid: 'Certificate invalid',
};

export async function domainsPage(main, ctx) {
  const page = await call('GET', `/domains${query({ page: new URLSearchParams(location.hash.split('?')[1] || '').get('page') })}`);
  const list = page.data.length === 0
    ? h('p', { class: 'empty', 'data-test': 'no-domains' }, 'No domains yet.')
    : h('ul', { class: 'domains', 'data-test': 'domains' }, page.data.map((d) => domainItem(d, ctx)));
  replace(main,
    h('h1', { tabindex: '-1' }, 'Domains'),
    ctx.can('domains', 'create') ? createForm(ctx) : null,
    list);
}

function domainItem(d, ctx) {
  const rec = d.dns_record;
  return h('li', { class: 'card', 'data-domain': d.domain },
    h('div', { class: 'title-row' },
      h('h2', {}, d.domain),
      h('span', { class: `state state-${d.status}` }, d.status === 'active' ? 'Active' : 'Pending'),
      ctx.can('domains', 'delete') ? h('button', {
        type: 'button', class: 'danger', 'data-test': 'delete-domain', 'aria-label': `Delete ${d.domain}`,
        onclick: async () => {
          if (!await confirmDialog(`Delete ${d.domain}? Its links stay, but stop serving until the domain returns.`, 'Delete')) return;
          try {
            await call('DELETE', `/domains/${d.id}`);
            announce(`Deleted ${d.domain}.`);
            ctx.go('#/domains');
          } catch (e) {
            announce(`Could not delete ${d.domain}: ${e.message}`, 'error');
          }
        },
      }, 'Delete') : null),
    d.status_reason ? h('p', { class: 'help' }, d.status_reason) : null,
    rec && d.status !== 'active' ? h('div', { class: 'record', 'data-test': 'dns-record' },
      h('p', {}, 'Publish this DNS record to prove the domain is yours:'),
      h('dl', {},
        h('dt', {}, 'Name'), h('dd', {}, h('code', {}, rec.name), ' ',
          h('button', { type: 'button', 'aria-label': `Copy record name ${rec.name}`, onclick: () => copyText(rec.name, 'record name') }, 'Copy')),
        h('dt', {}, 'Type'), h('dd', {}, h('code', {}, rec.type)),
        h('dt', {}, 'Value'), h('dd', {}, h('code', {}, rec.value), ' ',
          h('button', { type: 'button', 'aria-label': 'Copy record value', onclick: () => copyText(rec.value, 'record value') }, 'Copy')))) : null,
    h('p', { class: 'help' }, d.last_checked_at ? `DNS last checked ${formatTime(d.last_checked_at)}.` : 'DNS not checked yet.'),
    d.https ? h('p', { class: 'help' }, `HTTPS: ${httpsWords[d.https.state] || d.https.state}`,
      d.https.certificate_expires_at ? `, expires ${formatTime(d.https.certificate_expires_at)}` : '',
      d.https.message ? ` (${d.https.message})` : '', '.') : null,
    d.not_found_url ? h('p', { class: 'help' }, `Unknown keys go to ${d.not_found_url}`) : null,
    d.expired_url ? h('p', { class: 'help' }, `Expired links go to ${d.expired_url}`) : null);
}

function createForm(ctx) {
  const names = [['domain', 'Hostname', 'go.example.com'], ['not_found_url', 'Not-found page (optional)', 'https://example.com/'],
    ['expired_url', 'Expired-link page (optional)', 'https://example.com/expired']];
  const inputs = {};
  const errors = {};
  const fieldsEls = names.map(([name, label, placeholder]) => {
    inputs[name] = h('input', { id: `domain-${name}`, name, type: name === 'domain' ? 'text' : 'url', placeholder, 'aria-describedby': `err-${name}`, required: name === 'domain' ? true : null });
    errors[name] = h('p', { id: `err-${name}`, class: 'field-error', 'data-test': `err-${name}` });
    return h('div', { class: 'field' }, h('label', { for: `domain-${name}` }, label), inputs[name], errors[name]);
  });
  const form = h('form', { class: 'card', novalidate: true, 'data-test': 'domain-form' },
    h('h2', {}, 'Add a domain'), fieldsEls,
    h('button', { type: 'submit', class: 'primary', 'data-test': 'add-domain' }, 'Add domain'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = {};
    for (const [name] of names) {
      errors[name].textContent = '';
      inputs[name].removeAttribute('aria-invalid');
      body[name] = inputs[name].value.trim() || null;
    }
    try {
      const d = await call('POST', '/domains', body);
      announce(`Added ${d.domain}; publish its DNS record to activate it.`);
      ctx.go('#/domains');
    } catch (ex) {
      if (!(ex instanceof ApiError)) throw ex;
      let first = null;
      for (const [field, msgs] of Object.entries(ex.errors)) {
        if (errors[field]) {
          errors[field].textContent = msgs.join(' ');
          inputs[field].setAttribute('aria-invalid', 'true');
          first = first || inputs[field];
        }
      }
      announce(ex.message, 'error');
      if (first) first.focus();
    }
  });
  return form;
}
