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

// TestPooledBodyRetried: a pooled link.clicked body is sent whole by
// every attempt, over real HTTPS: the first answer (500) comes before the
// receiver read the body, the second (200) after it read it all; the
// body goes back to the pool only when the delivery is over and the
// transport closed both requests' bodies.
func TestPooledBodyRetried(t *testing.T) {
	batch := clicksBody(benchClicks(maxBatch)) // about 35 KB: more than a TCP window's first write
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

	p := newPooledBody(batch[:len(batch)-len(clicksTail)], clicksTail)
	dl := &delivery{typ: "link.clicked", id: "clk_test", body: p.b, clicks: maxBatch, pooled: p}
	key := bytes.Repeat([]byte{7}, 32)
	if o := attempt(context.Background(), cfg, [][]byte{key}, dl, time.Now()); o.result != resultHTTPError {
		t.Fatalf("first attempt: %+v, want an HTTP error", o)
	}
	if o := attempt(context.Background(), cfg, [][]byte{key}, dl, time.Now()); !o.ok() {
		t.Fatalf("second attempt: %+v, want success", o)
	}
	mu.Lock()
	if len(got) != 1 || !bytes.Equal(got[0], batch) {
		t.Fatalf("the receiver read %d bodies; want the batch (%d bytes) once, whole", len(got), len(batch))
	}
	mu.Unlock()
	if r := p.refs.Load(); r < 1 {
		t.Fatalf("the body is held %d times while its delivery is not over", r)
	}
	dl.done()
	// The transport closes the first request's body on its own
	// goroutine, maybe after Do returned.
	NewWithT(t).Eventually(p.refs.Load, 10*time.Second, 10*time.Millisecond).Should(BeZero(),
		"the body is still held after its delivery and both requests ended")
}
