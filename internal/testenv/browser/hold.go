package browser

import (
	"context"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
)

// Held are the page's requests to URLs matching a pattern, paused in
// Chromium (the DevTools protocol's Fetch domain) until Release: the server
// answers late, as on a slow network, so what the test does meanwhile
// (keys pressed quickly) happens before the page is drawn again. The
// requests themselves are the page's, answered by the real server.
type Held struct {
	mu       sync.Mutex
	paused   int
	released bool
	waiting  []fetch.RequestID
	ctx      context.Context
}

// Hold pauses the page's requests whose URL matches pattern ("*" any
// characters) from now on.
func Hold(t testing.TB, ctx context.Context, pattern string) *Held {
	t.Helper()
	h := &Held{ctx: ctx}
	// Subscribed before Enable, so no paused request is missed.
	events := chromedp.Events(ctx, fetch.RequestPaused)
	Run(t, ctx, "hold the requests to "+pattern, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: pattern}}})
		return err
	}))
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			h.mu.Lock()
			h.paused++
			if !h.released {
				h.waiting = append(h.waiting, ev.RequestID)
				h.mu.Unlock()
				continue
			}
			h.mu.Unlock()
			h.resume(ev.RequestID)
		}
	}()
	return h
}

// Paused is how many requests were paused so far (released or not).
func (h *Held) Paused() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.paused
}

// Release lets the paused requests go on, and every later one at once.
func (h *Held) Release() {
	h.mu.Lock()
	h.released = true
	waiting := h.waiting
	h.waiting = nil
	h.mu.Unlock()
	for _, id := range waiting {
		h.resume(id)
	}
}

// resume continues one paused request; an error means the tab is gone
// (the test ended), and the request with it.
func (h *Held) resume(id fetch.RequestID) {
	_, _ = chromedp.Call(h.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id})
}
