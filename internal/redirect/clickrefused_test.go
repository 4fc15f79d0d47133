package redirect

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
)

// TestRefusedUnsureWriteIsGivenUp: an unanswered click write that
// kube-apiserver refuses every time it is sent again at its unchanged
// resourceVersion (422 here: its patch lists more clickWriters than the
// CRD allows, as one spooled by a build with another limit would) is given
// up after a bound: its clicks are counted as dropped, and the Link's later
// clicks, held behind it until then, are written (and the spool removed).
func TestRefusedUnsureWriteIsGivenUp(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	host := ns + ".refused.test"
	for i, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("write-ahead=%t", durable), func(t *testing.T) {
			g := NewWithT(t)
			name := fmt.Sprintf("l%d", i)
			l := createLink(t, ns, name, host, name, "https://dest.example/", nil)
			q := &clickQueue{}
			c := &counter{uid: l.UID, namespace: ns, name: name, q: q}
			f := newFlusher(q, k8s, k8s, 100)
			path := filepath.Join(t.TempDir(), "clicks.spool")
			if durable {
				f.spool = newSpool(path, DefaultOptions().ClickSpoolSizeLimit)
			}

			u := f.patchFor(l, 3, time.Now().UnixNano())
			var p clickPatch
			g.Expect(json.Unmarshal(u.Patch, &p)).To(Succeed())
			for n := range 32 {
				p.Status.ClickWriters = append(p.Status.ClickWriters, kurzv1alpha1.ClickWriter{ID: fmt.Sprintf("w%d", n), Seq: 1, Time: metav1.Now()})
			}
			var err error
			u.Patch, err = json.Marshal(&p)
			g.Expect(err).NotTo(HaveOccurred())
			f.unsure[c.uid] = u
			c.requeue(2, time.Now().UnixNano()) // clicked since
			if durable {
				_, _, err := f.spool.checkpoint(f)
				g.Expect(err).NotTo(HaveOccurred())
			}

			_, failed := f.flush(ctx, false)
			g.Expect(failed).To(Equal(1), "refused")
			g.Expect(f.unsure).To(HaveKey(c.uid), "one refusal is not given up")
			g.Expect(clicksOf(t, ns, name)).To(BeZero())

			rounds := 1
			g.Eventually(func() int {
				f.flush(ctx, false)
				rounds++
				return len(f.unsure)
			}, 30*time.Second, 10*time.Millisecond).Should(BeZero(), "given up")
			g.Expect(rounds).To(BeNumerically("<=", 12))
			g.Expect(f.droppedClicks.Load()).To(Equal(int64(3)))
			f.flush(ctx, false)
			g.Expect(clicksOf(t, ns, name)).To(Equal(int64(2)), "the later clicks written")
			_, err = os.Stat(path)
			g.Expect(err).To(MatchError(os.ErrNotExist), "no spool left")
		})
	}
}
