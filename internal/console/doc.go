// Package console serves kurz's web console: plain HTML, CSS and
// JavaScript modules embedded in the binary (go:embed), so `go build`
// needs no npm and no build step, and every replica serves the same
// files. The console is a client of /api/v1 only: it holds no data and
// has no privilege of its own, and the API checks every request it makes.
//
// Decisions (docs/console.md and docs/security.md#the-console say why):
//
//   - It is served on the API listener under /console/ (restapi mounts
//     Handler), so the console and the API share an origin: the console's
//     requests need no CORS, and its Content-Security-Policy can allow
//     connect-src 'self' only.
//   - The user pastes an API token once; restapi reviews it and answers
//     with a session cookie (HttpOnly, SameSite=Strict, Secure outside
//     loopback, Path /api/, at most 8 hours and never past the token's
//     expiry) that carries the token sealed (internal/consolesession). The
//     page never keeps the token; it keeps the session's CSRF secret in
//     memory and sends it in X-Kurz-CSRF, which every state-changing
//     request authenticated by the cookie needs.
//   - Every answer carries a strict Content-Security-Policy: scripts and
//     styles from the console's own files only (no inline script or
//     style), images from itself and blob: (QR codes fetched with the
//     session), no frames, no form posts elsewhere. The scripts build the
//     page with textContent only, so markup in a link or tag shows as text.
//   - Charts (js/charts.js) are SVG built with createElementNS, no chart
//     library: a bar chart and bar lists are small, need no vendored code,
//     and keep to the same policy (bar widths go through the CSSOM, which
//     the policy allows; style attributes it forbids). CSV downloads and QR
//     images are fetched (the cookie authenticates them) and saved from a
//     blob: URL.
package console
