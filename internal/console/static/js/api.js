// api.js is the console's only way to the server: /api/v1, authenticated
// by the session cookie the server set at sign-in. The token itself is in
// that cookie only (HttpOnly: no script reads it); this module keeps the
// session's CSRF secret in memory and sends it with every request
// (docs/security.md says why).

const SESSION = '/api/console/session';

// csrf is the session's CSRF secret; null when not signed in (as far as
// this page knows).
let csrf = null;

export function signedIn() { return csrf !== null; }

// signIn exchanges a token for the session cookie.
export async function signIn(token) {
  const s = await sessionCall('POST', { token });
  csrf = s.csrf_token;
}

// resume asks for the CSRF secret of the session the cookie holds (after a
// reload); a 401 means there is none.
export async function resume() {
  const s = await sessionCall('GET');
  csrf = s.csrf_token;
}

// signOut has the server clear the cookie.
export async function signOut() {
  csrf = null;
  await sessionCall('DELETE');
}

export function forget() { csrf = null; }

async function sessionCall(method, body) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const resp = await fetch(SESSION, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin', cache: 'no-store',
  });
  if (resp.status === 204) return null;
  let data = null;
  try { data = await resp.json(); } catch { /* not JSON */ }
  if (!resp.ok) throw new ApiError(resp.status, data);
  return data;
}

// ApiError is a refused request: status, the API's message and, for a 422,
// its errors per field.
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.errors = (body && body.errors) || {};
  }
}

// onUnauthenticated is called on a 401 (the session or its token expired,
// or the token was revoked).
let unauthenticated = () => {};
export function onUnauthenticated(f) { unauthenticated = f; }

// call sends a request; body is sent as JSON. It answers the decoded JSON,
// or a Blob when asked (blob: true; accept names the type wanted, e.g.
// text/csv).
export async function call(method, path, body, opts = {}) {
  const headers = { Accept: opts.accept || (opts.blob ? '*/*' : 'application/json') };
  if (csrf) headers['X-Kurz-CSRF'] = csrf;
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const resp = await fetch(`/api/v1${path}`, {
    method, headers, body: payload, credentials: 'same-origin', cache: 'no-store',
  });
  if (!resp.ok) {
    let data = null;
    try { data = await resp.json(); } catch { /* not JSON */ }
    if (resp.status === 401) { csrf = null; unauthenticated(); }
    throw new ApiError(resp.status, data);
  }
  if (opts.blob) return { blob: await resp.blob(), disposition: resp.headers.get('Content-Disposition') };
  return resp.json();
}

// query builds a query string from an object; arrays repeat the key and
// empty values are left out.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    for (const x of Array.isArray(v) ? v : [v]) {
      if (x !== undefined && x !== null && x !== '') q.append(k, x);
    }
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}
