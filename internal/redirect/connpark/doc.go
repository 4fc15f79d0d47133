// Package connpark serves a fasthttp.Server on a TCP listener without a
// goroutine per idle connection, and without a read system call that finds
// nothing before each request.
//
// fasthttp's Serve runs every connection on its own goroutine for the
// connection's whole life; between requests that goroutine is parked in a
// read, and its stack (4 KiB after GC shrinking: the parked frames need more
// than the minimal 2 KiB) is most of what an idle keep-alive connection
// costs. Here each connection is served with ServeConn through a net.Conn
// wrapper that recognises fasthttp's read of a request's first byte: with
// ReduceMemoryUsage fasthttp reads that byte alone, and it is the first
// one-byte read after a response was written (or the first read of a
// ServeConn call).
//
// Every connection is registered, from its accept to its close, with one
// edge-triggered epoll instance (itself registered with Go's network poller,
// so no thread blocks in epoll_wait), watched by one goroutine. At a request
// boundary the wrapper reads the socket only if that goroutine reported data
// since the last boundary read (or that read filled its buffer); otherwise
// its goroutine waits for the report and reads then, once. A Go socket
// read instead tries the socket first, finds nothing (the client sends its
// next request only after reading the answer), waits in the network poller
// and reads again: two read system calls per request where nginx makes one,
// and on a virtualised machine a system call costs a microsecond or more.
// The report wakes the goroutine through a channel (a goroutine switch, as
// the network poller's wake-up was).
//
// A connection that gets no request for its linger (one to two seconds by
// default: the sweep, below, ends lingers once a second) is parked: the
// wrapper reports EOF, which ends ServeConn quietly (it ignores the Close
// that follows), and the goroutine ends. When the poller reports a parked
// connection readable, a new goroutine serves it with ServeConn again; if
// its peer is gone (reset or fully closed) it is closed. Every other read
// blocks as usual, in Go's network poller, so a request that arrives in
// pieces, or behind another (pipelining), is read as before.
//
// Connections waiting for a request, on their goroutine or parked, time out
// on deadline-ordered lists swept every second: one that has not sent its
// first request after the read timeout, an idle keep-alive one after the
// idle timeout, both counted from the end of the last answer (or the
// accept) and fired up to a second late. A peer that closes while its
// connection waits wakes it; it reads EOF and closes. Every deadline is
// counted on Go's monotonic clock (clock.go): a step of the wall clock
// neither closes the parked connections early nor keeps them open late.
//
// Since Serve replaces fasthttp's accept loop, it enforces the connection
// caps itself for the connection's whole life, parked or served: past
// MaxConns a new connection is answered 503 and closed, past MaxConnsPerIP
// from one peer address 429. Shutdown stops accepting, closes the waiting
// and parked connections and waits for the ones being served, which close
// at their next request boundary (answers written during shutdown say
// Connection: close).
//
// Per request the wrapper keeps fasthttp's cost to what it is without
// ReduceMemoryUsage, and lower (measured with hack/bench-redirect.sh, CPU
// per request):
//
//   - The boundary read takes everything the socket has into a pooled 4 KiB
//     buffer, held only during the read system call, and hands it to
//     fasthttp's next read: fasthttp's one-byte read and the buffered
//     read behind it cost one read system call.
//   - The server's read and write timeouts are the wrapper's, not
//     fasthttp's (which would read the clock and set a deadline four times
//     a request): a request's read and write deadlines are set from one
//     reading of the clock when its first bytes arrive, and reach the
//     socket only before a read or write, and only when the socket's
//     deadline is not close enough (never later than wanted, at most half
//     the timeout earlier): a busy connection updates the runtime's timers
//     about twice a second. The write timeout therefore fires after half
//     to all of its duration, counted from the request's first bytes after
//     the read timeout; a read within a request (one that arrives in
//     pieces) sets the socket's read deadline exactly.
//   - Reads, writes and the epoll_wait are raw system calls (rawio.go,
//     poller.go): on one core the scheduler's system call bookkeeping cost
//     more in context switches than the system calls themselves.
//
// Linux only (epoll); other systems use fasthttp's own Serve.
package connpark
