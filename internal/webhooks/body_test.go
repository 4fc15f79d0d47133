package webhooks

import (
	"bytes"
	"context"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// TestClickBodyRetried: a full link.clicked batch is sent whole by every
// attempt, over real HTTPS, while the batcher fills the next batch in the
// buffer it reuses: the first answer (500) comes before the receiver read
// the body, the second (200) after it read it all. The transport may
// still be writing the first request's body after Do returned, so the
// body must be a copy nobody changes.
func TestClickBodyRetried(t *testing.T) {
	g := NewWithT(t)
	p := newClickPath(t, false)
	fill := func() *delivery {
		for i := range fullBatch() {
			p.ev.Link = p.links[i%len(p.links)]
			p.ev.Time = time.Now()
			p.d.Clicked(&p.ev)
		}
		p.batch()
		dl, ok := p.s.q.pop(p.ctx)
		g.Expect(ok).To(BeTrue())
		return dl
	}
	dl := fill()
	want := bytes.Clone(dl.body)
	g.Expect(len(want)).To(BeNumerically(">", 64<<10), "more than a TCP window's first write")
	g.Expect(len(want)).To(BeNumerically("<=", maxBatchBytes))

	var mu sync.Mutex
	var got [][]byte
	n := 0
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
	}))
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	cfg := &senderConfig{url: srv.URL, timeout: 10 * time.Second, maxAttempts: 2,
		client: newClient(addressPolicy{loopback: true}, net.DefaultResolver, roots, 10*time.Second)}
	defer cfg.client.CloseIdleConnections()

	key := bytes.Repeat([]byte{7}, 32)
	o := attempt(context.Background(), cfg, [][]byte{key}, dl, time.Now())
	g.Expect(o.result).To(Equal(resultHTTPError), "first attempt")
	next := fill() // the batcher writes the next batch into its buffer
	g.Expect(next.body).NotTo(Equal(want))
	o = attempt(context.Background(), cfg, [][]byte{key}, dl, time.Now())
	g.Expect(o.ok()).To(BeTrue(), "second attempt: %+v", o)
	mu.Lock()
	defer mu.Unlock()
	g.Expect(got).To(HaveLen(1))
	g.Expect(bytes.Equal(got[0], want)).To(BeTrue(), "the receiver read the first batch (%d bytes) whole and unchanged; got %d bytes", len(want), len(got[0]))
}
