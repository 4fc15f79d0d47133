package redirect

import (
	"github.com/valyala/fasthttp"

	"github.com/kurz-dev/kurz/internal/clientip"
)

// clientKey is the visitor's network (see clientip.Prefix) as a limiter key.
func (h *handler) clientKey(ctx *fasthttp.RequestCtx) string {
	var xff [][]byte
	if len(h.trustedProxies) > 0 {
		xff = ctx.Request.Header.PeekAll("X-Forwarded-For")
	}
	return clientip.Prefix(ctx.RemoteIP(), xff, h.trustedProxies).String()
}
