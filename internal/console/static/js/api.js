// api.js is the console's only way to the server: /api/v1 with the token
// the user entered, kept in sessionStorage (docs/security.md says why).

const TOKEN = 'kurz.token';

export function token() { return sessionStorage.getItem(TOKEN); }
export function setToken(t) { sessionStorage.setItem(TOKEN, t); }
export function clearToken() { sessionStorage.removeItem(TOKEN); }

// ApiError is a refused request: status, the API's message and, for a 422,
// its errors per field.
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.errors = (body && body.errors) || {};
  }
}

// onUnauthenticated is called on a 401 (the token expired or was revoked).
let unauthenticated = () => {};
export function onUnauthenticated(f) { unauthenticated = f; }

// call sends a request; body is sent as JSON. It answers the decoded JSON,
// or a Blob when asked (blob: true; accept names the type wanted, e.g.
// text/csv).
export async function call(method, path, body, opts = {}) {
  const headers = { Accept: opts.accept || (opts.blob ? '*/*' : 'application/json') };
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const resp = await fetch(`/api/v1${path}`, {
    method, headers, body: payload, credentials: 'omit', cache: 'no-store',
  });
  if (!resp.ok) {
    let data = null;
    try { data = await resp.json(); } catch { /* not JSON */ }
    if (resp.status === 401) unauthenticated();
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
