// Package consolesession seals and opens the web console's session cookie:
// the API token it was signed in with, the session's expiry and its CSRF
// secret, encrypted and authenticated with AES-256-GCM (standard library)
// under a key every replica shares, so any replica accepts a session any
// other one issued and nobody can read or change it on the way.
//
// The cookie only carries the token: the API reviews it on every request
// as it reviews a bearer token (internal/restapi), so deleting the
// ServiceAccount ends the session too. The package is pure logic: keys,
// sealing, the token's expiry and the CSRF comparison; restapi sets and
// reads the cookie.
//
// A key file holds one key a line: the first seals, every one opens, so a
// key is rotated by putting the new one first and dropping the old one once
// the sessions it sealed have expired (MaxAge at most).
package consolesession
