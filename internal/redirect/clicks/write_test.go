package clicks

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/apiproxy"
)

// TestUnansweredClickWrite sends click patches to a frozen API server (an
// apiproxy in Hold mode): the Writer never sees an answer, and the API server applies
// them later, or never. Whatever the order, the Link ends with exactly the
// clicks made.
func TestUnansweredClickWrite(t *testing.T) {
	testenv.Need(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		// between runs after the first, unanswered flush of 3 clicks, with
		// the proxy still holding; it returns what the parked patches
		// answered when delivered now (nil: delivered at the end).
		between func(t *testing.T, w *Writer, p *apiproxy.Proxy, c *Counter) []int
		// late is what the parked patches answer when delivered at the end.
		late []int
	}{{
		name: "applied late, then settled by its marker",
		between: func(t *testing.T, w *Writer, p *apiproxy.Proxy, c *Counter) []int {
			return p.Release(t)
		},
	}, {
		name: "sent again while frozen, both delivered: one applies",
		between: func(t *testing.T, w *Writer, p *apiproxy.Proxy, c *Counter) []int {
			c.Click(time.Now().UnixNano())
			_, failed := w.flush(ctx, false) // settling resends it: held too
			NewWithT(t).Expect(failed).To(Equal(1))
			NewWithT(t).Expect(p.Parked()).To(Equal(2))
			return p.Release(t)
		},
	}, {
		name: "sent again and applied, the late one conflicts",
		late: []int{http.StatusConflict},
	}, {
		name: "another write moved resourceVersion, the late one conflicts",
		between: func(t *testing.T, w *Writer, p *apiproxy.Proxy, c *Counter) []int {
			g := NewWithT(t)
			var l kurzv1alpha1.Link
			g.Expect(k8s.Get(ctx, c.link.key(), &l)).To(Succeed())
			l.Status.ObservedGeneration = 7 // a controller's status write
			g.Expect(k8s.Status().Update(ctx, &l)).To(Succeed())
			return nil
		},
		late: []int{http.StatusConflict},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p := apiproxy.New(t, cfg)
			pc := p.Client(t)
			l, c, w := counted(t, "unanswered", pc, pc)
			w.writeTimeout = 2 * time.Second

			for range 3 {
				c.Click(time.Now().UnixNano())
			}
			p.SetMode(apiproxy.Hold)
			_, failed := w.flush(ctx, false)
			g.Expect(failed).To(Equal(1))
			g.Expect(w.unsure).To(HaveLen(1))
			g.Expect(p.Parked()).To(Equal(1))
			g.Expect(stored(t, l)).To(BeZero())

			var early []int
			if tt.between != nil {
				early = tt.between(t, w, p, c)
			}
			if tt.late == nil {
				// The first delivered copy applied; any other conflicted.
				g.Expect(early).NotTo(BeEmpty())
				g.Expect(early[0]).To(Equal(http.StatusOK))
				for _, code := range early[1:] {
					g.Expect(code).To(Equal(http.StatusConflict))
				}
			}
			p.SetMode(apiproxy.Pass)
			c.Click(time.Now().UnixNano())
			_, failed = w.flush(ctx, false)
			g.Expect(failed).To(BeZero())
			g.Expect(w.unsure).To(BeEmpty())
			want := int64(4)
			if tt.name == "sent again while frozen, both delivered: one applies" {
				want = 5
			}
			g.Expect(stored(t, l)).To(Equal(want))

			// Whatever is still parked arrives now, too late to count.
			g.Expect(p.Release(t)).To(Equal(tt.late))
			g.Expect(stored(t, l)).To(Equal(want))
			var o kurzv1alpha1.Link
			g.Expect(k8s.Get(ctx, l.key(), &o)).To(Succeed())
			g.Expect(o.Status.ClickWriters).To(ConsistOf(HaveField("ID", w.marks.id)))
		})
	}
}

func TestPruneWriters(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) metav1.Time { return metav1.NewTime(now.Add(-ago)) }
	var old []kurzv1alpha1.ClickWriter
	old = append(old, kurzv1alpha1.ClickWriter{ID: "me", Seq: 1, Time: at(time.Minute)})
	old = append(old, kurzv1alpha1.ClickWriter{ID: "stale", Seq: 9, Time: at(25 * time.Hour)})
	for i := range 20 {
		old = append(old, kurzv1alpha1.ClickWriter{ID: fmt.Sprintf("w%02d", i), Seq: 1, Time: at(time.Duration(i+1) * time.Hour)})
	}
	mine := kurzv1alpha1.ClickWriter{ID: "me", Seq: 2, Time: metav1.NewTime(now)}
	out, through := pruneWriters(old, nil, mine, now)
	g.Expect(out).To(HaveLen(maxClickWriters))
	g.Expect(out[0]).To(Equal(mine))
	ids := map[string]bool{}
	for _, w := range out {
		g.Expect(ids[w.ID]).To(BeFalse(), "one entry per writer")
		ids[w.ID] = true
	}
	g.Expect(ids).NotTo(HaveKey("stale"))
	g.Expect(ids).To(HaveKey("w00"))    // newest others kept
	g.Expect(ids).NotTo(HaveKey("w19")) // oldest past the cap dropped
	// The newest dropped entry: w15 (16 h ago; w00..w14 fill the 15 places).
	g.Expect(through).NotTo(BeNil())
	g.Expect(through.Time).To(Equal(now.Add(-16 * time.Hour)))

	// The watermark never goes back.
	later := metav1.NewTime(now.Add(-time.Minute))
	_, through = pruneWriters(nil, &later, mine, now)
	g.Expect(through.Time).To(Equal(later.Time))
}
