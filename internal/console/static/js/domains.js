// domains.js: the workspace's domains, the DNS record a pending one must
// publish (copyable), when it was last checked and its HTTPS state; create,
// edit and delete as /me allows.

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

// after, when set, finds what gets the focus once the page is drawn again
// after a change: where the user goes on (the new domain's DNS record,
// the saved domain's Edit, the domain left after a delete), not the title.
let after = null;

// control finds the first control of domain host's card (a button whose
// name starts with what, when given), once drawn again.
function control(host, what) {
  return (main) => {
    const card = [...main.querySelectorAll('li[data-domain]')].find((li) => li.dataset.domain === host);
    if (!card) return null;
    return what ? [...card.querySelectorAll('button')].find((b) => (b.getAttribute('aria-label') || '').startsWith(what)) : card.querySelector('button');
  };
}

export async function domainsPage(main, ctx) {
  const focusAfter = after;
  after = null;
  const page = await call('GET', `/domains${query({ page: new URLSearchParams(location.hash.split('?')[1] || '').get('page') })}`);
  const list = page.data.length === 0
    ? h('p', { class: 'empty', 'data-test': 'no-domains' }, 'No domains yet.')
    : h('ul', { class: 'domains', 'data-test': 'domains' }, page.data.map((d) => domainItem(d, ctx)));
  replace(main,
    h('h1', { tabindex: '-1' }, 'Domains'),
    ctx.can('domains', 'create') ? createForm(ctx) : null,
    list);
  const next = focusAfter && focusAfter(main);
  if (next) next.focus();
}

function domainItem(d, ctx) {
  const rec = d.dns_record;
  const edit = ctx.can('domains', 'update') ? editForm(d, ctx) : null;
  return h('li', { class: 'card', 'data-domain': d.domain },
    h('div', { class: 'title-row' },
      h('h2', {}, d.domain),
      h('span', { class: `state state-${d.status}` }, d.status === 'active' ? 'Active' : 'Pending'),
      edit ? edit.button : null,
      ctx.can('domains', 'delete') ? h('button', {
        type: 'button', class: 'danger', 'data-test': 'delete-domain', 'aria-label': `Delete ${d.domain}`,
        onclick: async () => {
          if (!await confirmDialog(`Delete ${d.domain}? Its links stay, but stop serving until the domain returns.`, 'Delete')) return;
          try {
            await call('DELETE', `/domains/${d.id}`);
            announce(`Deleted ${d.domain}.`);
            // The card that took its place, or the one before it.
            const cards = [...document.querySelectorAll('li[data-domain]')].map((li) => li.dataset.domain);
            const i = cards.indexOf(d.domain);
            const left = cards[i + 1] || cards[i - 1];
            after = left ? control(left) : null;
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
    d.expired_url ? h('p', { class: 'help' }, `Expired links go to ${d.expired_url}`) : null,
    edit ? edit.form : null);
}

// fields of a domain the API takes (POST and PUT alike): [name, label,
// placeholder, help].
const fields = [
  ['domain', 'Hostname', 'go.example.com', ''],
  ['not_found_url', 'Not-found page (optional)', 'https://example.com/', 'Where unknown keys and the bare domain go.'],
  ['expired_url', 'Expired-link page (optional)', 'https://example.com/expired', 'Where expired links go, unless the link names its own.'],
];

// domainForm is the form of fields, with ids under prefix, filled from d
// (null: empty), ending with footer. save sends the body (an empty URL is
// null: it clears the field); the API's error for a field shows beside
// that field, and the first refused field gets the focus.
function domainForm(prefix, d, title, footer, save) {
  const inputs = {};
  const errors = {};
  const rows = fields.map(([name, label, placeholder, help]) => {
    const id = `${prefix}${name}`;
    inputs[name] = h('input', {
      id, name, type: name === 'domain' ? 'text' : 'url', placeholder, value: d ? (d[name] || '') : null,
      'aria-describedby': [`${prefix}err-${name}`, help ? `${prefix}help-${name}` : ''].join(' ').trim(),
      required: name === 'domain' ? true : null,
    });
    errors[name] = h('p', { id: `${prefix}err-${name}`, class: 'field-error', 'data-test': `err-${name}` });
    return h('div', { class: 'field' }, h('label', { for: id }, label), inputs[name], errors[name],
      help ? h('p', { id: `${prefix}help-${name}`, class: 'help' }, help) : null);
  });
  const formError = h('p', { class: 'field-error', role: 'alert', 'data-test': 'form-error' });
  const form = h('form', { class: 'card', novalidate: true },
    h(d ? 'h3' : 'h2', {}, title), rows, formError, footer);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = {};
    formError.textContent = '';
    for (const [name] of fields) {
      errors[name].textContent = '';
      inputs[name].removeAttribute('aria-invalid');
      body[name] = inputs[name].value.trim() || null;
    }
    try {
      await save(body);
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
      // Field errors show beside their fields; the rest (a 403, a 404)
      // here.
      if (first) first.focus();
      else formError.textContent = ex.message;
      announce(ex.message, 'error');
    }
  });
  return form;
}

function createForm(ctx) {
  const form = domainForm('domain-', null, 'Add a domain',
    h('button', { type: 'submit', class: 'primary', 'data-test': 'add-domain' }, 'Add domain'),
    async (body) => {
      const d = await call('POST', '/domains', body);
      announce(`Added ${d.domain}; publish its DNS record to activate it.`);
      after = control(d.domain, 'Copy');
      ctx.go('#/domains');
    });
  form.setAttribute('data-test', 'domain-form');
  return form;
}

// editForm is a domain's Edit button and the form it shows in the card
// (PUT /domains/{id}: the hostname and both pages). A new hostname must be
// proven by DNS again; the domain's links keep their hostname.
function editForm(d, ctx) {
  const prefix = `edit-${d.id}-`;
  const button = h('button', {
    type: 'button', 'data-test': 'edit-domain', 'aria-label': `Edit ${d.domain}`,
    'aria-expanded': 'false', 'aria-controls': `${prefix}form`,
  }, 'Edit');
  const cancel = h('button', { type: 'button', 'data-test': 'cancel-edit' }, 'Cancel');
  const form = domainForm(prefix, d, `Edit ${d.domain}`, [
    h('p', { class: 'help' },
      'A new hostname is pending until its DNS record is published; links keep the hostname they were made with.'),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary', 'data-test': 'save-domain' }, 'Save'), cancel)],
    async (body) => {
      const saved = await call('PUT', `/domains/${d.id}`, body);
      announce(`Saved ${saved.domain}.`);
      after = control(saved.domain, 'Edit');
      ctx.go('#/domains');
    });
  form.id = `${prefix}form`;
  form.setAttribute('data-test', 'domain-edit-form');
  form.hidden = true;
  const show = (open) => {
    form.hidden = !open;
    button.setAttribute('aria-expanded', String(open));
    if (open) form.querySelector('input').focus();
    else button.focus();
  };
  button.addEventListener('click', () => show(form.hidden));
  cancel.addEventListener('click', () => show(false));
  return { button, form };
}
