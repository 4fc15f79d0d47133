package redirect

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv/apiproxy"
)

// TestRetriedClickPatchCountsOnce: kube-apiserver applies a click patch but
// its sender is answered 503 with Retry-After, so client-go sends the same
// patch again; that copy gets 409 (its precondition is gone, applied by
// the first). The 409 must not read as "not applied": the writer finds its
// own marker in the Link and counts nothing again. Both ways a patch is
// sent: a plain flush (write), and a write-ahead round (spool on disk).
func TestRetriedClickPatchCountsOnce(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	host := ns + ".retry.test"
	for i, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("write-ahead=%t", durable), func(t *testing.T) {
			g := NewWithT(t)
			name := fmt.Sprintf("l%d", i)
			l := createLink(t, ns, name, host, name, "https://dest.example/", nil)
			p := apiproxy.New(t, cfg)
			pc := p.Client(t)
			q := &clickQueue{}
			c := &counter{uid: l.UID, namespace: ns, name: name, q: q}
			f := newFlusher(q, pc, pc, 100)
			if durable {
				f.spool = newSpool(filepath.Join(t.TempDir(), "clicks.spool"), DefaultOptions().ClickSpoolSizeLimit)
				f.spool.onDisk = true
			}

			for range 3 {
				c.click(time.Now().UnixNano())
			}
			p.SetMode(apiproxy.CommitThen503)
			f.flush(ctx, false)
			g.Expect(p.Swallowed()).To(Equal([]int{http.StatusOK}), "the first copy was applied")
			g.Expect(clicksOf(t, ns, name)).To(Equal(int64(3)))

			// Whatever the round left (an unsure write, counts) is settled
			// by the next ones.
			g.Eventually(func() bool {
				f.flush(ctx, false)
				return len(f.unsure) == 0 && c.n.Load() == 0
			}, 30*time.Second).Should(BeTrue())
			g.Expect(clicksOf(t, ns, name)).To(Equal(int64(3)), "counted once")
			g.Expect(k8s.Get(ctx, keyOf(ns, name), l)).To(Succeed())
			g.Expect(l.Status.ClickWriters).To(ConsistOf(HaveField("ID", f.marks.id)))

			c.click(time.Now().UnixNano())
			f.flush(ctx, false)
			g.Expect(clicksOf(t, ns, name)).To(Equal(int64(4)))
		})
	}
}
