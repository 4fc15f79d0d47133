//go:build linux

package connpark

import (
	"net"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/sys/unix"
)

// Closing a socket whose receive queue still holds data makes Linux send a
// reset instead of a FIN, and the reset makes the peer's kernel drop what
// the peer has not read yet: the answer. fasthttp closes so after refusing
// a request it could not read whole, a header block past its read buffer
// (431) or a body past its limit (413): the client is still sending when
// the answer goes out, and saw "connection reset" instead of the 431. So a
// connection closed after a refusal, or with unread data, sends its FIN
// first and reads and discards what the peer still sends, for a bounded
// time and number of bytes, as nginx's lingering close and Go's net/http
// (closeWriteAndWait) do.
const (
	drainTime  = time.Second
	drainBytes = 256 << 10 // a refused request's rest; beyond that the peer is not a client waiting for an answer
)

// refused wraps a fasthttp.Server's ErrorHandler, which answers requests
// fasthttp could not read, to mark their connection for a drained close.
func refused(answer func(*fasthttp.RequestCtx, error)) func(*fasthttp.RequestCtx, error) {
	if answer == nil {
		answer = defaultRefusal
	}
	return func(ctx *fasthttp.RequestCtx, err error) {
		if c, ok := ctx.Conn().(*conn); ok {
			c.refused = true
		}
		answer(ctx, err)
	}
}

// defaultRefusal is fasthttp's answer when the server sets no ErrorHandler
// (fasthttp does not export its own).
func defaultRefusal(ctx *fasthttp.RequestCtx, err error) {
	if _, ok := err.(*fasthttp.ErrSmallBuffer); ok {
		ctx.Error("Too big request header", http.StatusRequestHeaderFieldsTooLarge)
		return
	}
	if e, ok := err.(*net.OpError); ok && e.Timeout() {
		ctx.Error("Request timeout", http.StatusRequestTimeout)
		return
	}
	ctx.Error("Error when parsing request", http.StatusBadRequest)
}

// mustDrain reports whether closing c now could reset the answer just
// written: after a refusal, or with data in the receive queue.
func (c *conn) mustDrain() bool {
	if c.refused {
		return true
	}
	queued := 0
	_ = c.raw.Control(func(fd uintptr) { queued, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
	return queued > 0
}

// drain sends the FIN after the answer, then reads (on the socket itself:
// conn's Read and deadlines are fasthttp's, for requests) until the peer closes,
// drainTime passes or drainBytes were read, so that the close that follows
// finds an empty receive queue (or gives up on a peer that keeps sending).
func (c *conn) drain() {
	if c.CloseWrite() != nil || c.TCPConn.SetReadDeadline(time.Now().Add(drainTime)) != nil {
		return
	}
	a := aheadPool.Get().(*aheadBuf)
	defer aheadPool.Put(a)
	for left := drainBytes; left > 0; {
		n, err := c.TCPConn.Read(a.b[:])
		if err != nil {
			return
		}
		left -= n
	}
}
