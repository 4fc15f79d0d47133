// signin.js: the token form. The token is kept in this tab's sessionStorage
// only, and checked at once with /api/v1/me.

import { call, setToken, clearToken, ApiError } from './api.js';
import { h, replace, announce } from './dom.js';

export function signInPage(main, ctx) {
  const input = h('input', {
    id: 'token', name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false',
    required: true, 'aria-describedby': 'token-help err-token',
  });
  const err = h('p', { id: 'err-token', class: 'field-error' });
  const form = h('form', { class: 'card', 'data-test': 'signin', novalidate: true },
    h('div', { class: 'field' },
      h('label', { for: 'token' }, 'API token'),
      input,
      err,
      h('p', { id: 'token-help', class: 'help' },
        'A ServiceAccount token of your workspace, minted for the audience kurz. Your platform team gives you one, made with:'),
      h('pre', {}, h('code', {}, 'kubectl create token <serviceaccount> -n <workspace> --audience kurz --duration 8h'))),
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
    h('p', { class: 'help' },
      'The token stays in this browser tab (sessionStorage) until you sign out or close the tab.'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const t = input.value.trim();
    err.textContent = '';
    input.removeAttribute('aria-invalid');
    if (!t) {
      err.textContent = 'Enter a token.';
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    setToken(t);
    try {
      await call('GET', '/me');
    } catch (ex) {
      clearToken();
      err.textContent = ex instanceof ApiError && ex.status === 401
        ? 'This token was refused: it is not a ServiceAccount token for the audience kurz, or it expired.'
        : `The API did not accept the token: ${ex.message}`;
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    announce('Signed in.');
    ctx.signedIn();
  });
  replace(main, h('h1', { tabindex: '-1' }, 'Sign in to kurz'), form);
}
