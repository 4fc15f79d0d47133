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
// ServeConn call). If no byte arrives there within the linger (a second by
// default: a busy connection's next request comes sooner, and parking and
// waking cost more CPU than waiting), the wrapper ends ServeConn (it reports
// EOF and ignores the Close that follows) and the connection is parked: one goroutine waits on an epoll instance (itself registered with
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
// Linux only (epoll); other systems use fasthttp's own Serve.
package connpark
