package clicks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestRefusedUnsureWriteIsGivenUp: an unanswered click write that
// kube-apiserver refuses every time it is sent again at its unchanged
// resourceVersion (422 here: its patch lists more clickWriters than the
// CRD allows, as one spooled by a build with another limit would) is given
// up after a bound: its clicks are counted as dropped, and the Link's later
// clicks, held behind it until then, are written (and the spool removed).
func TestRefusedUnsureWriteIsGivenUp(t *testing.T) {
	testenv.Need(t)
	ctx := context.Background()
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("write-ahead=%t", durable), func(t *testing.T) {
			g := NewWithT(t)
			l, c, w := counted(t, "refused", k8s, k8s)
			path := filepath.Join(t.TempDir(), "clicks.spool")
			if durable {
				w.spool = newSpool(path, DefaultOptions().SpoolSizeLimit)
			}

			var o kurzv1alpha1.Link
			g.Expect(k8s.Get(ctx, l.key(), &o)).To(Succeed())
			u := w.patchFor(&o, 3, time.Now().UnixNano())
			var p clickPatch
			g.Expect(json.Unmarshal(u.Patch, &p)).To(Succeed())
			for n := range 32 {
				p.Status.ClickWriters = append(p.Status.ClickWriters, kurzv1alpha1.ClickWriter{ID: fmt.Sprintf("w%d", n), Seq: 1, Time: metav1.Now()})
			}
			var err error
			u.Patch, err = json.Marshal(&p)
			g.Expect(err).NotTo(HaveOccurred())
			w.unsure[l.UID] = u
			c.requeue(2, time.Now().UnixNano()) // clicked since
			if durable {
				_, _, err := w.spool.checkpoint(w)
				g.Expect(err).NotTo(HaveOccurred())
			}

			_, failed := w.flush(ctx, false)
			g.Expect(failed).To(Equal(1), "refused")
			g.Expect(w.unsure).To(HaveKey(l.UID), "one refusal is not given up")
			g.Expect(stored(t, l)).To(BeZero())

			rounds := 1
			g.Eventually(func() int {
				w.flush(ctx, false)
				rounds++
				return len(w.unsure)
			}, 30*time.Second, 10*time.Millisecond).Should(BeZero(), "given up")
			g.Expect(rounds).To(BeNumerically("<=", 12))
			g.Expect(w.droppedClicks.Load()).To(Equal(int64(3)))
			w.flush(ctx, false)
			g.Expect(stored(t, l)).To(Equal(int64(2)), "the later clicks written")
			_, err = os.Stat(path)
			g.Expect(err).To(MatchError(os.ErrNotExist), "no spool left")
		})
	}
}
