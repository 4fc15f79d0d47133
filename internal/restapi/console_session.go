package restapi

import (
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/consolesession"
)

// The console's session (docs/console.md, "Security model").
const (
	// sessionPath signs in (POST), says whether the browser is signed in
	// and gives the CSRF secret again after a reload (GET), and signs out
	// (DELETE). It is outside /api/v1, whose contract is the API clients'
	// (a browser-only login has no place there), but under /api/, so the
	// cookie's Path can be /api/: it goes with the API's requests and this
	// endpoint only, not with the console's files nor, where the redirect
	// server shares the API's host on another port (cookies ignore ports,
	// as in `kurz dev`), with anyone's short-link visit.
	sessionPath       = "/api/console/session"
	sessionCookie     = "kurz_console"
	sessionCookiePath = "/api/"
	// csrfHeader carries the session's CSRF secret on state-changing
	// requests authenticated by the cookie.
	csrfHeader = "X-Kurz-CSRF"
)

// errCSRF refuses a state-changing request authenticated by the cookie
// without the session's CSRF secret.
var errCSRF = newError(http.StatusForbidden, "CSRF token mismatch.")

// sessionView answers sign-in and GET of the session: the CSRF secret the
// console keeps in memory, and when the session ends.
type sessionView struct {
	CSRFToken string    `json:"csrf_token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// requestToken is the token a request is authenticated by: its bearer
// header (any client; no CSRF secret: a browser never adds one on its
// own), else the console's session cookie, whose state-changing requests
// must repeat the session's CSRF secret in X-Kurz-CSRF.
func (s *server) requestToken(r *http.Request) (string, error) {
	if r.Header.Get("Authorization") != "" {
		token, ok := bearerToken(r)
		if !ok {
			return "", errUnauthenticated
		}
		return token, nil
	}
	sess, err := s.openSession(r)
	if err != nil {
		return "", err
	}
	if !safeMethod(r.Method) && !consolesession.CSRFMatches(r.Header.Get(csrfHeader), sess.CSRF) {
		return "", errCSRF
	}
	return sess.Token, nil
}

// openSession opens the request's session cookie, or errUnauthenticated.
func (s *server) openSession(r *http.Request) (consolesession.Session, error) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil {
		return consolesession.Session{}, errUnauthenticated
	}
	sess, err := s.sessions.Open(ck.Value, s.now())
	if err != nil || !isJWT(sess.Token) {
		return consolesession.Session{}, errUnauthenticated
	}
	return sess, nil
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// sessionRoutes are the session endpoint's handlers, outside routes():
// they are not part of /api/v1's contract (and its OpenAPI document).
func (s *server) sessionRoutes() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		"POST " + sessionPath:   s.errorsTo(s.signIn),
		"GET " + sessionPath:    s.errorsTo(s.showSession),
		"DELETE " + sessionPath: s.signOut,
	}
}

func (s *server) errorsTo(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if err := h(w, r); err != nil {
			writeError(w, r, err)
		}
	}
}

// POST /api/console/session {"token": "..."}: the token is reviewed as the
// API reviews a bearer token (same cache, same rules), then sealed into
// the cookie. Every attempt takes one from the client's unauthenticated
// budget (--api-unauthenticated-rate-limit), so sign-in is no faster an
// oracle for guessing tokens than the API itself.
func (s *server) signIn(w http.ResponseWriter, r *http.Request) error {
	if err := s.admitUnknown(r); err != nil {
		return err
	}
	// A form on another site cannot send JSON without a CORS preflight,
	// which kurz never answers: no one signs a browser into their own
	// workspace behind its back (login CSRF). Sec-Fetch-Site says the same
	// where the browser sends it.
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return newError(http.StatusUnsupportedMediaType, "The request body must be application/json.")
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return errForbidden
	}
	m, err := decodeObject(r)
	if err != nil {
		return err
	}
	var token string
	if raw, ok := m["token"]; !ok || json.Unmarshal(raw, &token) != nil || strings.TrimSpace(token) == "" {
		var f fieldErrors
		f.add("token", "The token field is required.")
		return f.err()
	}
	token = strings.TrimSpace(token)
	if !isJWT(token) {
		return errUnauthenticated
	}
	key := hashToken(token)
	c, refused := s.auth.cached(key)
	if refused {
		return errUnauthenticated
	}
	if c == nil {
		if _, err := s.auth.authenticate(r.Context(), token, key); err != nil {
			return err
		}
	}
	now := s.now()
	csrf, err := consolesession.NewCSRF()
	if err != nil {
		return err
	}
	sess := consolesession.Session{Token: token, Expires: consolesession.Expiry(token, now), CSRF: csrf}
	value, err := s.sessions.Seal(sess)
	if err != nil {
		return err
	}
	http.SetCookie(w, sessionCookieFor(r, value, sess.Expires, now))
	writeJSON(w, http.StatusCreated, sessionView{CSRFToken: csrf, ExpiresAt: sess.Expires.UTC()})
	return nil
}

// GET /api/console/session: after a reload the console has lost its CSRF
// secret (it keeps it in memory only) and asks again. The token is
// reviewed: a session whose ServiceAccount is gone answers 401.
func (s *server) showSession(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.openSession(r)
	if err != nil {
		return err
	}
	key := hashToken(sess.Token)
	c, refused := s.auth.cached(key)
	if refused {
		return errUnauthenticated
	}
	if c == nil {
		if err := s.admitUnknown(r); err != nil {
			return err
		}
		if _, err := s.auth.authenticate(r.Context(), sess.Token, key); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, sessionView{CSRFToken: sess.CSRF, ExpiresAt: sess.Expires.UTC()})
	return nil
}

// DELETE /api/console/session: the cookie is cleared whatever it held (an
// expired or foreign one too), so it needs no CSRF secret: the worst a
// forged sign-out does is sign the user out, and SameSite=Strict keeps
// other sites from sending it anyway.
func (s *server) signOut(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: "", Path: sessionCookiePath, MaxAge: -1,
		HttpOnly: true, Secure: secureCookie(r), SameSite: http.SameSiteStrictMode,
	})
	w.WriteHeader(http.StatusNoContent)
}

// sessionCookieFor is the session cookie: out of the scripts' reach
// (HttpOnly), never sent by another site's request (SameSite=Strict),
// HTTPS-only outside loopback, and gone when the session ends.
func sessionCookieFor(r *http.Request, value string, expires, now time.Time) *http.Cookie {
	return &http.Cookie{
		Name:     sessionCookie,
		Value:    value,
		Path:     sessionCookiePath,
		Expires:  expires,
		MaxAge:   max(1, int(expires.Sub(now).Seconds())),
		HttpOnly: true,
		Secure:   secureCookie(r),
		SameSite: http.SameSiteStrictMode,
	}
}

// secureCookie decides the Secure attribute: on, unless the request came
// over plain HTTP to a loopback host (localhost, 127.0.0.0/8, ::1), where
// `kurz dev` serves and no one is on the wire. Anywhere else the console
// must be reached over HTTPS (a proxy terminating TLS is fine): the
// browser keeps a Secure cookie only from an HTTPS page.
func secureCookie(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	return !loopbackHost(r.Host)
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// noSessionKey is logged once when no --console-session-key-file is
// given.
const noSessionKey = ("no --console-session-key-file: console sessions are sealed with a key of this process only, so a session works only on this replica and ends when it restarts")
