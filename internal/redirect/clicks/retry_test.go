package clicks

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/apiproxy"
)

// TestRetriedClickPatchCountsOnce: kube-apiserver applies a click patch but
// its sender is answered 503 with Retry-After, so client-go sends the same
// patch again; that copy gets 409 (its precondition is gone, applied by
// the first). The 409 must not read as "not applied": the writer finds its
// own marker in the Link and counts nothing again. Both ways a patch is
// sent: a plain flush (write), and a write-ahead round (spool on disk).
func TestRetriedClickPatchCountsOnce(t *testing.T) {
	testenv.Need(t)
	ctx := context.Background()
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("write-ahead=%t", durable), func(t *testing.T) {
			g := NewWithT(t)
			p := apiproxy.New(t, cfg)
			pc := p.Client(t)
			l, c, w := counted(t, "retry", pc, pc)
			if durable {
				w.spool = newSpool(filepath.Join(t.TempDir(), "clicks.spool"), DefaultOptions().SpoolSizeLimit)
				w.spool.onDisk = true
			}

			for range 3 {
				c.Click(time.Now().UnixNano())
			}
			p.SetMode(apiproxy.CommitThen503)
			w.flush(ctx, false)
			g.Expect(p.Swallowed()).To(Equal([]int{http.StatusOK}), "the first copy was applied")
			g.Expect(stored(t, l)).To(Equal(int64(3)))

			// Whatever the round left (an unsure write, counts) is settled
			// by the next ones.
			g.Eventually(func() bool {
				w.flush(ctx, false)
				return len(w.unsure) == 0 && c.n.Load() == 0
			}, 30*time.Second).Should(BeTrue())
			g.Expect(stored(t, l)).To(Equal(int64(3)), "counted once")
			var o kurzv1alpha1.Link
			g.Expect(k8s.Get(ctx, l.key(), &o)).To(Succeed())
			g.Expect(o.Status.ClickWriters).To(ConsistOf(HaveField("ID", w.marks.id)))

			c.Click(time.Now().UnixNano())
			w.flush(ctx, false)
			g.Expect(stored(t, l)).To(Equal(int64(4)))
		})
	}
}
