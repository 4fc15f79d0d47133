package clicks

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// flakyStatus wraps a client so the next status patch fails as a timeout
// would, after (applied) or without reaching the API server.
type flakyStatus struct {
	client.Client
	mu            sync.Mutex
	fail, applied bool
}

func (f *flakyStatus) failNext(applied bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail, f.applied = true, applied
}

func (f *flakyStatus) Status() client.SubResourceWriter {
	return flakyWriter{f.Client.Status(), f}
}

type flakyWriter struct {
	client.SubResourceWriter
	f *flakyStatus
}

func (w flakyWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	w.f.mu.Lock()
	fail, applied := w.f.fail, w.f.applied
	w.f.fail = false
	w.f.mu.Unlock()
	if !fail {
		return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	}
	if applied {
		if err := w.SubResourceWriter.Patch(ctx, obj, patch, opts...); err != nil {
			return err
		}
	}
	return &url.Error{Op: "Patch", URL: "https://kube-apiserver/", Err: context.DeadlineExceeded}
}

// TestUnknownOutcomeNotCountedTwice: a click patch that timed out after the
// API server applied it is not added again by the next flush; one that never
// arrived is.
func TestUnknownOutcomeNotCountedTwice(t *testing.T) {
	testenv.Need(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		applied bool
	}{{"applied", true}, {"not applied", false}} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			flaky := &flakyStatus{Client: k8s}
			l, c, w := counted(t, "unsure", flaky, k8s)

			for range 3 {
				c.Click(time.Now().UnixNano())
			}
			flaky.failNext(tt.applied)
			_, failed := w.flush(ctx, false)
			g.Expect(failed).To(Equal(1))
			want := int64(0)
			if tt.applied {
				want = 3
			}
			g.Expect(stored(t, l)).To(Equal(want))

			// A status write by someone else (a controller) between the two
			// flushes changes resourceVersion, not the clicks.
			var o kurzv1alpha1.Link
			g.Expect(k8s.Get(ctx, l.key(), &o)).To(Succeed())
			o.Status.ObservedGeneration = 1
			g.Expect(k8s.Status().Update(ctx, &o)).To(Succeed())

			_, failed = w.flush(ctx, false) // no new clicks: only settles
			g.Expect(failed).To(BeZero())
			g.Expect(stored(t, l)).To(Equal(int64(3)))

			c.Click(time.Now().UnixNano())
			c.Click(time.Now().UnixNano())
			_, failed = w.flush(ctx, false)
			g.Expect(failed).To(BeZero())
			g.Expect(stored(t, l)).To(Equal(int64(5)))
			g.Expect(w.unsure).To(BeEmpty())
		})
	}
}
