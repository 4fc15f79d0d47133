package redirect

import (
	"github.com/valyala/fasthttp"

	"github.com/kurz-dev/kurz/internal/redirect/connpark"
)

// newConnServer serves srv's connections without a goroutine per idle
// keep-alive connection (see package connpark), under the connection caps.
func newConnServer(srv *fasthttp.Server, o Options) (connServer, error) {
	return connpark.New(srv, connpark.Options{
		MaxConns:      o.MaxConns,
		MaxConnsPerIP: o.MaxConnsPerIP,
		ReadTimeout:   srv.ReadTimeout,
		IdleTimeout:   srv.IdleTimeout,
	})
}
