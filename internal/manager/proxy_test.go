package manager

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// freezer is a TCP proxy to kube-apiserver that can stop passing bytes
// without closing anything, as a SIGSTOPped kube-apiserver would: requests
// hang, connections stay open, and everything resumes on thaw.
type freezer struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	thawed chan struct{} // closed while bytes flow
	conns  []net.Conn
}

func newFreezer(t *testing.T, target string) *freezer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln, target: target, thawed: make(chan struct{})}
	close(f.thawed)
	go f.accept()
	t.Cleanup(f.close)
	return f
}

func (f *freezer) addr() string { return f.ln.Addr().String() }

func (f *freezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.thawed = make(chan struct{})
}

func (f *freezer) thaw() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.thawed:
	default:
		close(f.thawed)
	}
}

func (f *freezer) wait() {
	f.mu.Lock()
	c := f.thawed
	f.mu.Unlock()
	<-c
}

func (f *freezer) track(c net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conns = append(f.conns, c)
}

func (f *freezer) close() {
	f.thaw()
	_ = f.ln.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		_ = c.Close()
	}
}

func (f *freezer) accept() {
	for {
		in, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.track(in)
		go func() {
			f.wait() // a frozen server accepts nothing
			out, err := net.Dial("tcp", f.target)
			if err != nil {
				_ = in.Close()
				return
			}
			f.track(out)
			go f.pipe(out, in)
			f.pipe(in, out)
		}()
	}
}

// pipe copies src to dst, holding what it read while frozen.
func (f *freezer) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			f.wait()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				_ = dst.Close()
				return
			}
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
			return
		}
	}
}
