package webhooks

import (
	"io"
	"sync"
	"sync/atomic"
)

// Bodies of link.clicked batches are reused: a full batch is 30 to 40 KB,
// one every 100 clicks, and allocating it afresh (pages the runtime
// faults in again after each collection) cost the replica about as much as
// writing its JSON (BenchmarkClickPath). A body goes back to the pool
// when nobody can read it any more: its delivery is over (delivered,
// given up or dropped) and every request that sent it has been closed by
// the HTTP transport, which may still be writing it after Do returned
// (an answer that came before the whole body was sent).

// pooledBody is a body from bodyPool and the count of its holders: the
// delivery, and each request body reading it.
type pooledBody struct {
	b    []byte
	refs atomic.Int32
}

var bodyPool = sync.Pool{New: func() any { return new(pooledBody) }}

// newPooledBody returns a body from the pool holding head+tail, held once
// (by its delivery).
func newPooledBody(head []byte, tail string) *pooledBody {
	p := bodyPool.Get().(*pooledBody)
	p.b = append(append(p.b[:0], head...), tail...)
	p.refs.Store(1)
	return p
}

// release drops one hold; the last one returns the body to the pool.
func (p *pooledBody) release() {
	if p.refs.Add(-1) == 0 {
		bodyPool.Put(p)
	}
}

// reader is a request body reading p, holding it until the transport
// closes it.
func (p *pooledBody) reader() io.ReadCloser {
	p.refs.Add(1)
	return &bodyReader{p: p}
}

// bodyReader reads a pooled body. A transport may close it on one
// goroutine while it reads on another (HTTP/2 aborting a request): the
// lock keeps the last Read from reading a body given back.
type bodyReader struct {
	p      *pooledBody
	mu     sync.Mutex
	off    int
	closed bool
}

func (r *bodyReader) Read(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, io.ErrClosedPipe
	}
	if r.off >= len(r.p.b) {
		return 0, io.EOF
	}
	n := copy(b, r.p.b[r.off:])
	r.off += n
	return n, nil
}

// Close releases the body once, however often it is called.
func (r *bodyReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		r.p.release()
	}
	return nil
}
