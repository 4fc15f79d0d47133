// linkform.js: create and edit a link, every field of the API, with the
// API's validation errors beside their fields.

import { call, ApiError } from './api.js';
import { h, replace, announce } from './dom.js';
import { linkStates } from './states.js';

// fields in form order: [name, label, input type, help].
const fields = [
  ['domain', 'Domain', 'text', 'A domain of the workspace.'],
  ['key', 'Key', 'text', '1–64 of A–Z a–z 0–9 _ -; the path of the short link.'],
  ['url', 'Destination URL', 'url', 'Where visitors go: an absolute http or https URL.'],
  ['tags', 'Tags', 'text', 'Comma-separated, e.g. sale, team:web.'],
  ['expires_at', 'Expires at', 'datetime-local', 'In your time zone; empty: never.'],
  ['expired_redirect_url', 'After expiry, go to', 'url', 'Empty: the domain\'s expiry page.'],
  ['ios', 'iOS destination', 'url', 'For iPhone and iPad visitors; empty: the destination URL.'],
  ['android', 'Android destination', 'url', 'For Android visitors; empty: the destination URL.'],
  ['utm_source', 'UTM source', 'text', ''],
  ['utm_medium', 'UTM medium', 'text', ''],
  ['utm_campaign', 'UTM campaign', 'text', ''],
  ['utm_term', 'UTM term', 'text', ''],
  ['utm_content', 'UTM content', 'text', ''],
  ['utm_name', 'UTM name', 'text', ''],
  ['external_id', 'External id', 'text', 'The link\'s id in another system (digits).'],
  ['password', 'Password', 'password', 'Visitors must enter it. Leave empty to keep the current one.'],
];

// toLocalInput turns an API time into a datetime-local value.
function toLocalInput(s) {
  if (!s) return '';
  const d = new Date(s);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export async function linkFormPage(main, ctx, id) {
  const [link, domains] = await Promise.all([
    id ? call('GET', `/links/${id}`) : Promise.resolve(null),
    call('GET', '/domains').catch(() => ({ data: [] })),
  ]);
  const editing = link !== null;
  const inputs = {};
  const errors = {};
  const rows = fields.map(([name, label, type, help]) => {
    const attrs = {
      id: `link-${name}`, name, type, 'aria-describedby': `help-${name} err-${name}`,
      autocomplete: type === 'password' ? 'new-password' : 'off',
    };
    if (name === 'domain') attrs.list = 'domain-list';
    if (['domain', 'key', 'url'].includes(name)) attrs.required = true;
    if (link) {
      if (name === 'tags') attrs.value = link.tags.join(', ');
      else if (name === 'expires_at') attrs.value = toLocalInput(link.expires_at);
      else if (name !== 'password' && link[name] !== null && link[name] !== undefined) attrs.value = String(link[name]);
    } else if (name === 'domain' && domains.data.length === 1) {
      attrs.value = domains.data[0].domain;
    }
    inputs[name] = h('input', attrs);
    errors[name] = h('p', { id: `err-${name}`, class: 'field-error', 'data-test': `err-${name}` });
    return h('div', { class: 'field' }, h('label', { for: `link-${name}` }, label), inputs[name], errors[name],
      help ? h('p', { id: `help-${name}`, class: 'help' }, help) : null);
  });
  const removePassword = h('input', { id: 'link-password-remove', type: 'checkbox' });
  const formError = h('p', { class: 'field-error', role: 'alert', 'data-test': 'form-error' });
  const form = h('form', { class: 'card link-form', novalidate: true, 'data-test': 'link-form' },
    h('datalist', { id: 'domain-list' }, domains.data.map((d) => h('option', { value: d.domain }))),
    rows.slice(0, 4),
    h('details', { open: editing && (link.ios || link.android || link.expires_at || link.utm_source) ? true : null },
      h('summary', {}, 'Expiry, targeting, UTM and more'), rows.slice(4)),
    editing && link.password ? h('div', { class: 'field check' }, removePassword,
      h('label', { for: 'link-password-remove' }, 'Remove the password')) : null,
    formError,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary', 'data-test': 'save' }, editing ? 'Save' : 'Create link'),
      h('a', { class: 'button', href: '#/links' }, 'Cancel')));

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    for (const name of Object.keys(errors)) {
      errors[name].textContent = '';
      inputs[name].removeAttribute('aria-invalid');
    }
    formError.textContent = '';
    const body = {};
    for (const [name] of fields) {
      const v = inputs[name].value;
      if (name === 'tags') body.tags = v.split(',').map((t) => t.trim()).filter((t) => t !== '');
      else if (name === 'expires_at') body.expires_at = v ? new Date(v).toISOString() : null;
      else if (name === 'password') {
        if (v !== '') body.password = v;
        else if (removePassword.checked) body.password = null;
      } else body[name] = v.trim() === '' ? null : v.trim();
    }
    try {
      const saved = editing ? await call('PUT', `/links/${link.id}`, body) : await call('POST', '/links', body);
      announce(`${editing ? 'Saved' : 'Created'} ${saved.link}.`);
      ctx.go('#/links');
    } catch (ex) {
      if (!(ex instanceof ApiError)) throw ex;
      let first = null;
      for (const [field, msgs] of Object.entries(ex.errors)) {
        const name = field.replace(/\..*$/, '');
        if (errors[name]) {
          errors[name].textContent = msgs.join(' ');
          inputs[name].setAttribute('aria-invalid', 'true');
          if (!first) first = inputs[name];
        }
      }
      // Field errors show beside their fields; the rest (a 403, a 409)
      // here.
      if (!first) formError.textContent = ex.message;
      if (first) {
        const det = first.closest('details');
        if (det) det.open = true;
        first.focus();
      }
      announce(ex.message, 'error');
    }
  });

  const state = link ? (linkStates[link.state] || linkStates.pending) : null;
  replace(main,
    h('h1', { tabindex: '-1' }, editing ? `Edit ${link.link}` : 'New link'),
    link ? h('p', { class: `state-line state-${link.state}`, 'data-test': 'link-state' },
      h('strong', {}, state.label), '. ', link.state_reason ? `${link.state_reason}. ` : '', state.advice) : null,
    link ? h('p', { class: 'help' }, `${link.clicks} click${link.clicks === 1 ? '' : 's'}; created ${new Date(link.created_at).toLocaleString()}.`) : null,
    form);
}
