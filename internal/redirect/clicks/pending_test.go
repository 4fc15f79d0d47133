package clicks

import (
	"context"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/apiproxy"
)

// TestClicksPendingWhileAWriteIsUnanswered: clicks stay pending while their
// patch is in flight to a frozen API server and after it went unanswered
// (outcome unknown), and stop being pending once a flush has settled that
// the late patch applied.
func TestClicksPendingWhileAWriteIsUnanswered(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	p := apiproxy.New(t, cfg)
	pc := p.Client(t)
	l, c, w := counted(t, "pending", pc, pc)
	w.writeTimeout = 2 * time.Second
	pending := func() [2]int64 { links, clicks := w.pending(); return [2]int64{links, clicks} }

	for range 3 {
		c.Click(time.Now().UnixNano())
	}
	g.Expect(pending()).To(Equal([2]int64{1, 3}))
	p.SetMode(apiproxy.Hold)
	done := make(chan int)
	go func() {
		_, failed := w.flush(ctx, false)
		done <- failed
	}()
	g.Eventually(p.Parked, 10*time.Second).Should(Equal(1))
	g.Expect(pending()).To(Equal([2]int64{1, 3}), "in flight")
	g.Expect(<-done).To(Equal(1))
	g.Expect(pending()).To(Equal([2]int64{1, 3}), "outcome unknown")
	c.Click(time.Now().UnixNano())
	g.Expect(pending()).To(Equal([2]int64{1, 4}))

	g.Expect(p.Release(t)).To(Equal([]int{http.StatusOK}))
	p.SetMode(apiproxy.Pass)
	_, failed := w.flush(ctx, false)
	g.Expect(failed).To(BeZero())
	g.Expect(stored(t, l)).To(Equal(int64(4)))
	g.Expect(pending()).To(Equal([2]int64{0, 0}))
}
