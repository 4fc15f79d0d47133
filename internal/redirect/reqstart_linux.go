//go:build linux

package redirect

import (
	"time"

	"github.com/valyala/fasthttp"

	"github.com/kurz-dev/kurz/internal/redirect/connpark"
)

// requestStart is when a request began: on a connection connpark serves,
// the reading connpark took when the request's first bytes arrived, which
// gives the handler the request's wall time and duration without reading
// the clock again (see connpark.RequestStart); otherwise (a handler called
// without one, as tests do) a time.Now.
type requestStart struct {
	cp   connpark.Start
	t    time.Time
	isCP bool
}

func startOf(ctx *fasthttp.RequestCtx) requestStart {
	if s, ok := connpark.RequestStart(ctx.Conn()); ok {
		return requestStart{cp: s, isCP: true}
	}
	return requestStart{t: time.Now()}
}

// unixNano is the start on the wall clock.
func (s requestStart) unixNano() int64 {
	if s.isCP {
		return s.cp.UnixNano()
	}
	return s.t.UnixNano()
}

// elapsed is the time since the start.
func (s requestStart) elapsed() time.Duration {
	if s.isCP {
		return s.cp.Elapsed()
	}
	return time.Since(s.t)
}
