// app.js starts the console: it routes on the URL's fragment, resumes the
// session the cookie holds (or shows the sign-in form), asks /api/v1/me
// what the token may do, and draws the page. A page shows only
// the controls /me allows; the API still checks every request.

import { call, signedIn, resume, signOut as endSession, forget, onUnauthenticated, ApiError } from './api.js';
import { h, replace, announce } from './dom.js';
import { linksPage } from './links.js';
import { linkFormPage } from './linkform.js';
import { domainsPage } from './domains.js';
import { linkPage } from './linkpage.js';
import { workspacePage } from './workspace.js';
import { signInPage } from './signin.js';

const session = { me: null };

// ctx is what pages get: the caller, its rights and navigation.
const ctx = {
  get me() { return session.me; },
  can(resource, verb) { return !!(session.me && session.me.can[resource] && session.me.can[resource][verb]); },
  go(hash) {
    if (location.hash === hash) route();
    else location.hash = hash;
  },
  signedIn() { session.me = null; ctx.go('#/links'); },
};

async function signOut() {
  session.me = null;
  try {
    await endSession();
    announce('Signed out.');
  } catch (e) {
    announce(`Signing out failed: ${e.message}`, 'error');
  }
  ctx.go('#/signin');
}

onUnauthenticated(() => {
  forget();
  session.me = null;
});

function renderNav(current) {
  const nav = document.getElementById('nav');
  const who = document.getElementById('who');
  if (!session.me) {
    replace(nav);
    replace(who);
    return;
  }
  const item = (hash, label, name) => h('a', { href: hash, 'aria-current': current === name ? 'page' : null }, label);
  replace(nav, item('#/links', 'Links', 'links'), item('#/analytics', 'Analytics', 'analytics'), item('#/domains', 'Domains', 'domains'));
  const readOnly = !ctx.can('links', 'create') && !ctx.can('links', 'update') && !ctx.can('links', 'delete');
  replace(who,
    h('span', { 'data-test': 'workspace' }, `Workspace ${session.me.workspace_name}`),
    readOnly ? h('span', { class: 'badge' }, 'read only') : null,
    h('button', { type: 'button', class: 'link', 'data-test': 'signout', onclick: signOut }, 'Sign out'));
}

async function route() {
  const main = document.getElementById('main');
  const [path, qs] = location.hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(qs || '');
  if (!signedIn() && path !== '/signin') {
    try {
      await resume();
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 401)) {
        renderNav();
        replace(main, h('h1', { tabindex: '-1' }, 'The API did not answer'), h('p', {}, e.message));
        showTitle(main);
        return;
      }
    }
  }
  if (!signedIn()) {
    session.me = null;
    renderNav();
    signInPage(main, ctx);
    showTitle(main);
    return;
  }
  if (!session.me) {
    try {
      session.me = await call('GET', '/me');
    } catch (e) {
      renderNav();
      if (e instanceof ApiError && e.status === 401) {
        announce('Your token was refused (expired or revoked); sign in again.', 'error');
        signInPage(main, ctx);
        showTitle(main);
      } else {
        replace(main, h('h1', { tabindex: '-1' }, 'The API did not answer'), h('p', {}, e.message));
        showTitle(main);
      }
      return;
    }
  }
  let m;
  try {
    if (path === '/domains') {
      renderNav('domains');
      await domainsPage(main, ctx);
    } else if (path === '/analytics') {
      renderNav('analytics');
      await workspacePage(main, ctx, params);
    } else if ((m = path.match(/^\/links\/([0-9a-fA-F-]{36})\/view$/))) {
      renderNav('links');
      await linkPage(main, ctx, m[1], params);
    } else if (path === '/links/new') {
      renderNav('links');
      await linkFormPage(main, ctx, null);
    } else if ((m = path.match(/^\/links\/([0-9a-fA-F-]{36})$/))) {
      renderNav('links');
      await linkFormPage(main, ctx, m[1]);
    } else {
      renderNav('links');
      await linksPage(main, ctx, params);
    }
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      announce('Your token was refused (expired or revoked); sign in again.', 'error');
      ctx.go('#/signin');
      return;
    }
    replace(main, h('h1', { tabindex: '-1' }, 'Something went wrong'), h('p', { class: 'error' }, e.message));
  }
  showTitle(main);
}

// showTitle names the document after the page's title and gives the title
// the focus, so a screen reader reads the new page and Tab goes on from its
// top (the sign-in page too: after sign-out the focused button is gone). A
// page that put the focus somewhere keeps it there (the links' filters; a
// new analytics range is drawn without a route, and keeps it anyway).
function showTitle(main) {
  const title = main.querySelector('h1');
  if (!title) return;
  document.title = `${title.textContent} · kurz`;
  if (!main.contains(document.activeElement) || document.activeElement === main) title.focus();
}

// The skip link leads past the header to the page's title. Its href
// alone would not do: the fragment is the console's route.
document.querySelector('.skip').addEventListener('click', (e) => {
  e.preventDefault();
  const main = document.getElementById('main');
  (main.querySelector('h1') || main).focus();
});

window.addEventListener('hashchange', route);
route();
