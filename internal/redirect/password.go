package redirect

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html/template"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kurz-dev/kurz/internal/keyedlimit"
	"github.com/kurz-dev/kurz/internal/redirect/bcryptproc"
)

const (
	// passwordCookie remembers a typed password; Path=/<key> scopes it to
	// the link.
	passwordCookie = "kurz_pw"
	// cookieTTL is how long a typed password is remembered.
	cookieTTL = 24 * time.Hour
	// Wrong passwords per client IP and link: a burst, then one per period.
	attemptBurst  = 5
	attemptPeriod = 30 * time.Second
	// Attempts per link from all clients together: rotating addresses (a
	// botnet, or every /64 of an IPv6 range) gets fresh per-client buckets
	// but not a fresh link bucket. Right passwords take a token too; a
	// visitor with the cookie does not.
	linkBurst  = 60
	linkPeriod = time.Second
	// attemptEntries bounds each limiter map; the least recently used key
	// forgets its attempts first.
	attemptEntries = 65536
	// checkWait is how long an attempt waits for a free bcrypt slot before
	// it is answered 429: long enough to ride out a short burst, short
	// enough that waiting attempts do not pile up connections.
	checkWait = time.Second
	// maxBcryptCost is the highest cost a password check may take: one check
	// at 12 is about a quarter second of CPU, and each step doubles it
	// ($2a$31$ would take days). The CRD refuses more; hashes stored before
	// that rule are refused here, as if the password were wrong.
	maxBcryptCost = 12
	// checkNice is the nice value of the threads that run bcrypt in this
	// process when the worker process cannot (see compare).
	checkNice = 10
	// workerFailedLogEvery spaces the log lines of comparisons made here
	// because the worker failed: a flood would otherwise log each one.
	workerFailedLogEvery = time.Minute
)

// passwords serves password-protected links: the form, the check, and the
// cookie that lets the visitor through afterwards.
type passwords struct {
	key      []byte // HMAC key of the cookie, shared by replicas when configured
	attempts *keyedlimit.Limiter
	// linkAttempts is the per-link bucket, keyed by uid.
	linkAttempts *keyedlimit.Limiter
	// checks holds one token per bcrypt comparison running: a check costs
	// milliseconds to a second of CPU, and unbounded they would starve the
	// redirects served on the same machine.
	checks chan struct{}
	// bcrypt runs the comparisons in a worker process at the lowest CPU
	// priority (see internal/redirect/bcryptproc for why not here).
	bcrypt *bcryptproc.Checker
	// workerFailedLogged is when a comparison made here because the worker
	// failed was last logged (unix nanoseconds).
	workerFailedLogged atomic.Int64
	// log reports links whose hash is refused; set by Server.Start before
	// serving.
	log logr.Logger
	// costWarned remembers the links already reported, so a refused hash is
	// logged once, not on every attempt.
	costWarned *lru.Cache[types.UID, struct{}]
}

// newPasswords returns the password checker; concurrency (> 0) bounds the
// bcrypt comparisons running at once.
func newPasswords(key []byte, concurrency int) *passwords {
	w, _ := lru.New[types.UID, struct{}](1024) // errors only for size <= 0
	return &passwords{key: key, log: logr.Discard(), costWarned: w,
		attempts:     keyedlimit.New(rate.Every(attemptPeriod), attemptBurst, attemptEntries),
		linkAttempts: keyedlimit.New(rate.Every(linkPeriod), linkBurst, attemptEntries),
		checks:       make(chan struct{}, concurrency), bcrypt: bcryptproc.New(concurrency, "")}
}

func (p *passwords) serve(ctx *fasthttp.RequestCtx, h *handler, e *Entry, key []byte, post bool, now time.Time) outcome {
	if !post {
		if p.validCookie(ctx.Request.Header.Cookie(passwordCookie), e, now) {
			h.follow(ctx, e, h.status, ctx.IsHead(), now.UnixNano())
			return outcomeRedirect
		}
		renderForm(ctx, http.StatusOK, key, "")
		return outcomePasswordForm
	}

	// Every attempt takes its tokens before the slow check, so concurrent
	// attempts cannot all pass a check of the count. A right password takes
	// them too and refunds nothing: it sets a cookie, so it is not repeated.
	ok, _, wait := p.attempts.Take(h.clientKey(ctx)+"\x00"+string(e.uid()), 1, now)
	if ok {
		ok, _, wait = p.linkAttempts.Take(string(e.uid()), 1, now)
	}
	if !ok {
		return tooMany(ctx, wait)
	}
	pw := ctx.PostArgs().Peek("password")
	ok, checked := p.check(e, pw)
	if !checked {
		// Every slot stayed busy for checkWait: the replica is checking as
		// many passwords as it can afford.
		tooMany(ctx, time.Second)
		return outcomePasswordBusy
	}
	if !ok {
		renderForm(ctx, http.StatusForbidden, key, "Wrong password, try again.")
		return outcomePasswordWrong
	}
	p.setCookie(ctx, e, key, now)
	// 303 whatever --redirect-status says: the browser must follow with a
	// GET, not repost the password to the destination (307/308 would).
	h.follow(ctx, e, http.StatusSeeOther, false, now.UnixNano())
	return outcomeRedirect
}

// tooMany answers 429 with a Retry-After of wait, rounded up to seconds.
func tooMany(ctx *fasthttp.RequestCtx, wait time.Duration) outcome {
	ctx.Response.Header.Set("Retry-After", strconv.Itoa(max(int(math.Ceil(wait.Seconds())), 1)))
	plain(ctx, http.StatusTooManyRequests)
	return outcomeRateLimited
}

// check compares pw with the link's hash once a comparison slot is free.
// checked is false when no slot freed up within checkWait.
func (p *passwords) check(e *Entry, pw []byte) (ok, checked bool) {
	select {
	case p.checks <- struct{}{}:
	default:
		t := time.NewTimer(checkWait)
		select {
		case p.checks <- struct{}{}:
			t.Stop()
		case <-t.C:
			return false, false
		}
	}
	defer func() { <-p.checks }()
	return p.matches(e, pw), true
}

// matches reports whether pw is the link's password. A hash costlier than
// maxBcryptCost is refused without comparing, and logged once per link
// (without the hash).
func (p *passwords) matches(e *Entry, pw []byte) bool {
	if len(pw) == 0 {
		return false
	}
	hash := []byte(e.passwordHash)
	cost, err := bcrypt.Cost(hash)
	if err != nil {
		return false // not a bcrypt hash: the comparison would fail too
	}
	if cost > maxBcryptCost {
		if seen, _ := p.costWarned.ContainsOrAdd(e.uid(), struct{}{}); !seen {
			p.log.Error(nil, "link password hash is too costly to check; every password is refused until it is rehashed",
				"link", types.NamespacedName{Namespace: e.rec.namespace, Name: e.rec.name}, "cost", cost, "maxCost", maxBcryptCost)
		}
		return false
	}
	return p.compare(hash, pw)
}

// compare runs the bcrypt comparison in the worker process. Should the
// worker fail to start or die, it compares here instead, as kurz did before
// the worker (logged, at most once a minute): on a thread of its own at
// nice 10, which still holds one of the runtime's processors while it runs.
func (p *passwords) compare(hash, pw []byte) bool {
	ok, err := p.bcrypt.Compare(hash, pw)
	switch {
	case err == nil:
		return ok
	case errors.Is(err, bcryptproc.ErrTooLong):
		return false // longer than any bcrypt hash, or than the form allows
	}
	now := time.Now().UnixNano()
	if last := p.workerFailedLogged.Load(); now-last >= int64(workerFailedLogEvery) && p.workerFailedLogged.CompareAndSwap(last, now) {
		p.log.Error(err, "password check: the bcrypt worker process failed; comparing in this process, where it slows the redirects")
	}
	done := make(chan bool, 1)
	go func() {
		// A thread of its own, at a lower priority. The goroutine exits
		// locked, so the runtime ends the thread with it and the lowered
		// priority never reaches another goroutine.
		runtime.LockOSThread()
		lowerThreadPriority()
		done <- bcrypt.CompareHashAndPassword(hash, pw) == nil
	}()
	return <-done
}

// close ends the worker process.
func (p *passwords) close() { _ = p.bcrypt.Close() }

// cookieMAC binds the cookie to the link (uid) and its password (hash): a new
// password invalidates every cookie of the old one.
func (p *passwords) cookieMAC(e *Entry, expires int64) []byte {
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte(e.uid()))
	m.Write([]byte{0})
	m.Write([]byte(e.passwordHash))
	m.Write([]byte{0})
	m.Write(strconv.AppendInt(nil, expires, 10))
	return m.Sum(nil)
}

// cookie value: "<expiry unix seconds>.<base64url HMAC>".
func (p *passwords) cookieValue(e *Entry, expires int64) []byte {
	v := strconv.AppendInt(nil, expires, 10)
	v = append(v, '.')
	return base64.RawURLEncoding.AppendEncode(v, p.cookieMAC(e, expires))
}

func (p *passwords) validCookie(v []byte, e *Entry, now time.Time) bool {
	exp, mac, ok := bytes.Cut(v, []byte{'.'})
	if !ok {
		return false
	}
	expires, err := strconv.ParseInt(string(exp), 10, 64)
	if err != nil || now.Unix() >= expires {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(string(mac))
	if err != nil {
		return false
	}
	return hmac.Equal(got, p.cookieMAC(e, expires))
}

func (p *passwords) setCookie(ctx *fasthttp.RequestCtx, e *Entry, key []byte, now time.Time) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(passwordCookie)
	c.SetValueBytes(p.cookieValue(e, now.Add(cookieTTL).Unix()))
	c.SetPath("/" + string(key))
	c.SetMaxAge(int(cookieTTL.Seconds()))
	c.SetHTTPOnly(true)
	c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	c.SetSecure(ctx.IsTLS() || bytes.EqualFold(ctx.Request.Header.Peek("X-Forwarded-Proto"), []byte("https")))
	ctx.Response.Header.SetCookie(c)
}

var formTemplate = template.Must(template.New("form").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Password required</title>
<style>
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;background:#f4f5f7;font:16px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328}
form{background:#fff;padding:1.5rem;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.12);width:min(22rem,90vw)}
h1{font-size:1.2rem;margin:0 0 1rem}
input,button{box-sizing:border-box;width:100%;font:inherit;padding:.7rem;border-radius:8px}
input{border:1px solid #c9ced6;margin-bottom:.8rem}
button{border:0;background:#2456d3;color:#fff;cursor:pointer}
.err{color:#b42318;margin:0 0 .8rem}
</style>
</head>
<body>
<form method="post">
<h1>This link is password protected</h1>
{{if .Error}}<p class="err" role="alert">{{.Error}}</p>{{end}}
<label for="password">Password for /{{.Key}}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Continue</button>
</form>
</body>
</html>
`))

func renderForm(ctx *fasthttp.RequestCtx, status int, key []byte, errMsg string) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/html; charset=utf-8")
	// No external assets and no scripts: a strict policy costs nothing.
	ctx.Response.Header.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	ctx.Response.Header.Set("Referrer-Policy", "no-referrer")
	_ = formTemplate.Execute(ctx, struct{ Key, Error string }{string(key), errMsg})
}
