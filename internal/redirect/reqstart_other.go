//go:build !linux

package redirect

import (
	"time"

	"github.com/valyala/fasthttp"
)

// requestStart is when the handler was called (fasthttp's own Serve, where
// there is no connpark to say when the request's first bytes arrived).
type requestStart struct{ t time.Time }

func startOf(*fasthttp.RequestCtx) requestStart { return requestStart{time.Now()} }

func (s requestStart) unixNano() int64 { return s.t.UnixNano() }

func (s requestStart) elapsed() time.Duration { return time.Since(s.t) }
