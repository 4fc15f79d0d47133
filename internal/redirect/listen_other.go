//go:build !linux

package redirect

import (
	"context"

	"github.com/valyala/fasthttp"
)

// newConnServer is fasthttp's own Serve where there is no epoll: a goroutine
// per connection, idle ones included, and fasthttp's connection caps.
func newConnServer(srv *fasthttp.Server, o Options) (connServer, error) {
	srv.Concurrency = o.MaxConns
	srv.MaxConnsPerIP = o.MaxConnsPerIP
	srv.CloseOnShutdown = true
	return fasthttpServer{srv}, nil
}

type fasthttpServer struct{ *fasthttp.Server }

func (s fasthttpServer) Shutdown(ctx context.Context) error { return s.ShutdownWithContext(ctx) }
