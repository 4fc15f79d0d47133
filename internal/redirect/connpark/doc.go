// Package connpark serves a fasthttp.Server on a TCP listener without a
// goroutine per idle connection.
//
// fasthttp's Serve runs every connection on its own goroutine for the
// connection's whole life; between requests that goroutine is parked in a
// read, and its stack (4 KiB after GC shrinking: the parked frames need more
// than the minimal 2 KiB) is most of what an idle keep-alive connection
// costs. Here each connection is served with ServeConn through a net.Conn
// wrapper that recognises fasthttp's read of a request's first byte: with
// ReduceMemoryUsage fasthttp reads that byte alone, and it is the first
// one-byte read after a response was written (or the first read of a
// ServeConn call). If no byte arrives there within the linger (half a second
// to a second by default, see below: a busy connection's next request comes
// sooner, and parking and waking cost more CPU than waiting), the wrapper
// ends ServeConn (it reports EOF and ignores the Close that follows) and the
// connection is parked: one goroutine waits on an epoll instance (itself registered with
// Go's network poller, so no thread blocks in epoll_wait) and, when a parked
// connection becomes readable, serves it with ServeConn again on a new
// goroutine. Every other read blocks as usual, so a request that arrives in
// pieces, or behind another (pipelining), is read as before.
//
// Parked connections time out on two deadline-ordered lists swept every
// second: a connection that has not sent its first request after the read
// timeout, and an idle keep-alive connection after the idle timeout. A peer
// that closes while parked wakes its connection, which reads EOF and closes.
//
// Since Serve replaces fasthttp's accept loop, it enforces the connection
// caps itself for the connection's whole life, parked or served: past
// MaxConns a new connection is answered 503 and closed, past MaxConnsPerIP
// from one peer address 429. Shutdown stops accepting, closes the parked
// connections and waits for the ones being served, which close at their next
// request boundary (answers written during shutdown say Connection: close).
//
// Per request the wrapper keeps fasthttp's cost to what it is without
// ReduceMemoryUsage, and lower (measured with hack/bench-redirect.sh, CPU
// per request):
//
//   - The boundary read takes everything the socket has into a pooled 4 KiB
//     buffer, held only during the read system call, and hands it to
//     fasthttp's next read: one read per request, not two.
//   - fasthttp's deadlines (three read and one write per request) are kept
//     in the wrapper and reach the socket only before a read or write, and
//     only when the socket's deadline is not close enough (never later than
//     asked, at most half the timeout earlier): a busy connection updates
//     the runtime's timers about twice a second instead of four times a
//     request. Timeouts therefore fire after half to all of their duration,
//     the linger included.
//   - Reads and writes are raw system calls in Go's network poller
//     (rawio.go): on one core the scheduler's system call bookkeeping cost
//     more in context switches than the system calls themselves.
//
// Linux only (epoll); other systems use fasthttp's own Serve.
package connpark
