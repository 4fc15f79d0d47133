package redirect

import (
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/kurz-dev/kurz/internal/analytics/capture"
	"github.com/kurz-dev/kurz/internal/clientip"
)

// The redirect listener runs on fasthttp rather than net/http: on the
// project's 2-core benchmark (hack/bench-redirect.sh) a bare net/http handler
// reached about 0.6x of nginx's requests/s, fasthttp about 1.0x. Only this
// listener uses it; the API server stays on net/http.

var (
	hdrCacheControl = []byte("Cache-Control")
	// Redirects must reach us every time: every click is counted and edits
	// take effect at once.
	valNoStore = []byte("no-store, no-cache, must-revalidate, max-age=0")
	hdrRobots  = []byte("X-Robots-Tag")
	valNoindex = []byte("noindex")
	hdrAllow   = []byte("Allow")
	hdrReferer = []byte("Referer")
)

const hdrXFF = "X-Forwarded-For"

// handler answers redirect requests from the index.
type handler struct {
	ix       *Index
	status   int
	password *passwords
	// trustedProxies are the peers whose X-Forwarded-For names the visitor.
	trustedProxies []netip.Prefix
	// analytics is click analytics' capture ring, nil when it is off;
	// countryHeader the trusted header naming the visitor's country (nil:
	// none), normalised as fasthttp normalises the names it parses.
	analytics *capture.Ring
	// onDemand, when set (webhooks without analytics), points to the
	// ring to capture into while something wants clicks, nil otherwise.
	onDemand      *atomic.Pointer[capture.Ring]
	countryHeader []byte
}

// serve is the fasthttp handler. It reads the clock once, at the end: the
// request's start is connpark's reading (startOf).
func (h *handler) serve(ctx *fasthttp.RequestCtx) {
	start := startOf(ctx)
	o := h.answer(ctx, time.Unix(0, start.unixNano()))
	lookupSeconds.Observe(start.elapsed().Seconds())
	outcomeCounters[o].Inc()
}

func (h *handler) answer(ctx *fasthttp.RequestCtx, now time.Time) outcome {
	hdr := &ctx.Response.Header
	hdr.SetCanonical(hdrCacheControl, valNoStore)
	hdr.SetCanonical(hdrRobots, valNoindex)

	get, head, post := ctx.IsGet(), ctx.IsHead(), ctx.IsPost()
	if !get && !head && !post {
		hdr.SetCanonical(hdrAllow, []byte("GET, HEAD, POST"))
		plain(ctx, http.StatusMethodNotAllowed)
		return outcomeBadMethod
	}

	var buf [maxHostLen]byte
	host, ok := normalizeHost(ctx.Host(), buf[:])
	if !ok {
		plain(ctx, http.StatusNotFound)
		return outcomeNotFound
	}
	key, _, keyOK := parseKey(ctx.Path())
	if !keyOK {
		key = nil
	}
	r := h.ix.lookup(host, key)
	switch {
	case !r.hostFound:
		plain(ctx, http.StatusNotFound)
		return outcomeNotFound
	case r.entry == nil: // "/" or an unknown key
		if r.notFoundURL != "" {
			h.redirect(ctx, h.status, r.notFoundURL)
			return outcomeNotFoundRedirect
		}
		plain(ctx, http.StatusNotFound)
		return outcomeNotFound
	}

	e := r.entry
	ns := now.UnixNano()
	if e.expired(ns) {
		target := e.expiredURL
		if target == "" {
			target = r.expiredURL
		}
		if target == "" {
			plain(ctx, http.StatusGone)
			return outcomeGone
		}
		h.redirect(ctx, h.status, target)
		return outcomeExpiredRedirect
	}
	if e.passwordHash != "" {
		return h.password.serve(ctx, h, e, key, post, now)
	}
	if post {
		hdr.SetCanonical(hdrAllow, []byte("GET, HEAD"))
		plain(ctx, http.StatusMethodNotAllowed)
		return outcomeBadMethod
	}
	h.follow(ctx, e, h.status, head, ns)
	return outcomeRedirect
}

// follow redirects to the link's destination and counts a click unless the
// request is HEAD.
func (h *handler) follow(ctx *fasthttp.RequestCtx, e *Entry, status int, head bool, now int64) {
	chosen, chosenUTM := e.destination(ctx.Request.Header.UserAgent())
	dest, utm := chosen, chosenUTM
	if qs := ctx.URI().QueryString(); len(qs) > 0 {
		dest, utm = mergeQuery(dest+utm, string(qs)), ""
	}
	switch {
	case utm == "":
		h.redirect(ctx, status, dest)
	case len(dest)+len(utm) <= stackLocation:
		var b [stackLocation]byte
		ctx.Response.Header.SetBytesV("Location", append(append(b[:0], dest...), utm...)) // copies
		ctx.SetStatusCode(status)
	default:
		b := locations.Get().(*[]byte)
		*b = append(append((*b)[:0], dest...), utm...)
		ctx.Response.Header.SetBytesV("Location", *b) // copies
		ctx.SetStatusCode(status)
		locations.Put(b)
	}
	if !head {
		h.clicked(ctx, e, chosen, chosenUTM, now)
	}
}

// clicked records a click of e's Link at now, sent to dest+utm before the
// visitor's query was merged in: the one place a click is recorded, once
// per redirect a visitor follows (HEAD counts none): its
// count for the Link's status (an atomic add, no allocation) and, while
// the capture runs (analytics on, or a Webhook wants link.clicked), a copy
// of what the capture needs in a slot of its ring (a full ring drops it
// and counts; nothing waits or allocates).
func (h *handler) clicked(ctx *fasthttp.RequestCtx, e *Entry, dest, utm string, now int64) {
	e.slot.Click(e, now)
	if h.analytics != nil {
		h.capture(ctx, e, dest, utm, now, h.analytics)
	} else if h.onDemand != nil {
		if r := h.onDemand.Load(); r != nil {
			h.capture(ctx, e, dest, utm, now, r)
		}
	}
}

// capture copies the click into the analytics ring: the time, the Entry,
// the destination chosen, the client's address, and the User-Agent,
// Referer, query and country header truncated to the slot's fixed sizes.
func (h *handler) capture(ctx *fasthttp.RequestCtx, e *Entry, dest, utm string, now int64, ring *capture.Ring) {
	c, r, ok := ring.Reserve()
	if !ok {
		return
	}
	c.Time = time.Unix(0, now)
	c.Link, c.Dest, c.DestUTM = e, dest, utm
	var xff [][]byte
	if len(h.trustedProxies) > 0 {
		xff = ctx.Request.Header.PeekAll(hdrXFF)
	}
	c.IP = clientip.Addr(ctx.RemoteIP(), xff, h.trustedProxies)
	hdr := &ctx.Request.Header
	// UserAgent is a field of fasthttp's header; PeekCanonical finds the
	// others by the name as fasthttp normalised it when parsing, without
	// PeekBytes' copy and normalisation of the name per click.
	c.SetText(hdr.UserAgent(), hdr.PeekCanonical(hdrReferer), ctx.URI().QueryString())
	if h.countryHeader != nil {
		c.SetCountry(hdr.PeekCanonical(h.countryHeader))
	} else {
		c.SetCountry(nil)
	}
	ring.Commit(r)
}

// A destination and its utm_* parameters are joined for the Location header
// in a buffer on the stack when they fit in stackLocation bytes, else in one
// of locations; the link's Entry holds the two apart so that the cache's URL
// is not held twice per link.
const stackLocation = 512

var locations = sync.Pool{New: func() any { return new([]byte) }}

func (h *handler) redirect(ctx *fasthttp.RequestCtx, status int, location string) {
	ctx.Response.Header.Set("Location", location) // copies without allocating
	ctx.SetStatusCode(status)
}

// plainBodies are the small bodies of error answers.
var plainBodies = map[int][]byte{
	http.StatusNotFound:         []byte("404 not found\n"),
	http.StatusGone:             []byte("410 gone: this link has expired\n"),
	http.StatusMethodNotAllowed: []byte("405 method not allowed\n"),
	http.StatusTooManyRequests:  []byte("429 too many attempts, try again later\n"),
}

func plain(ctx *fasthttp.RequestCtx, status int) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBody(plainBodies[status])
}
