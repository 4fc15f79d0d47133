// signin.js: the token form. The token is sent once, to the session
// endpoint, which reviews it and answers with a cookie holding it; the
// page keeps nothing of it.

import { signIn, ApiError } from './api.js';
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
      'kurz keeps it in a cookie this page cannot read, until you sign out or the token expires (8 hours at most).'));
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
    try {
      await signIn(t);
    } catch (ex) {
      err.textContent = ex instanceof ApiError && ex.status === 401
        ? 'This token was refused: it is not a ServiceAccount token for the audience kurz, or it expired.'
        : `The API did not accept the token: ${ex.message}`;
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    input.value = '';
    announce('Signed in.');
    ctx.signedIn();
  });
  replace(main, h('h1', { tabindex: '-1' }, 'Sign in to kurz'), form);
}
