package visibility

import (
	"context"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/pagination"
)

var base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func createdAt(l *kurzv1alpha1.Link) time.Time { return l.CreationTimestamp.Time }

// link makes a Link created at base + us microseconds, at resourceVersion rv.
func link(ns, uid string, us int, rv int) *kurzv1alpha1.Link {
	return &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: "l-" + uid, UID: types.UID(uid), ResourceVersion: strconv.Itoa(rv),
		CreationTimestamp: metav1.NewTime(base.Add(time.Duration(us) * time.Microsecond)),
	}}
}

// ref names the object of uid, as the API's writes do.
func ref(uid types.UID) *kurzv1alpha1.Link {
	return &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{UID: uid}}
}

// waitInBackground runs tr.WaitFor(ctx, uid, rv, deleted) in a goroutine
// and returns once it waits; the channel receives what WaitFor returns.
func waitInBackground(g Gomega, ctx context.Context, tr *Tracker, uid types.UID, rv string, deleted bool) <-chan error {
	done := make(chan error, 1)
	go func() { done <- tr.WaitFor(ctx, ref(uid), rv, deleted) }()
	g.Eventually(tr.Waiting, 20*time.Second).Should(BeTrue())
	return done
}

func TestWaitFor(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ix := pagination.NewIndex(createdAt)
	tr := Track(ix)
	ix.Upsert(link("a", "u1", 10, 5))

	// Already there, at that version or a later one.
	g.Expect(tr.WaitFor(ctx, ref("u1"), "5", false)).To(Succeed())
	g.Expect(tr.WaitFor(ctx, ref("u1"), "4", false)).To(Succeed())
	g.Expect(tr.WaitFor(ctx, ref("u2"), "", true)).To(Succeed())
	g.Expect(tr.WaitFor(ctx, ref("u1"), "not-a-number", false)).To(MatchError(ContainSubstring("not a number")))

	// Not there yet: a cancelled context ends the wait with its error.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	g.Expect(tr.WaitFor(cancelled, ref("u1"), "6", false)).To(MatchError(context.Canceled))
	g.Expect(tr.WaitFor(cancelled, ref("u1"), "", true)).To(MatchError(context.Canceled))

	// Each wait keeps waiting through the other changes and returns on the
	// awaited one.
	for _, tt := range []struct {
		name    string
		uid     types.UID
		rv      string
		deleted bool
		others  []func()
		awaited func()
	}{
		{"returns on the write", "u1", "7", false,
			[]func(){
				func() { ix.Upsert(link("a", "u1", 10, 6)) }, // not yet
				func() { ix.Upsert(link("a", "u3", 10, 7)) }, // another object
			},
			func() { ix.Upsert(link("a", "u1", 10, 7)) }},
		{"returns on a new object", "u9", "9", false, nil,
			func() { ix.Upsert(link("a", "u9", 10, 9)) }},
		{"returns on delete", "u1", "", true,
			[]func(){func() { ix.Delete(link("a", "u3", 10, 8)) }},
			func() { ix.Delete(link("a", "u1", 10, 8)) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			done := waitInBackground(g, ctx, tr, tt.uid, tt.rv, tt.deleted)
			for _, change := range tt.others {
				change()
			}
			if tt.others != nil {
				g.Eventually(tr.Waiting, 20*time.Second).Should(BeTrue())
				g.Expect(done).NotTo(Receive())
			}
			tt.awaited()
			g.Eventually(done, 20*time.Second).Should(Receive(BeNil()))
		})
	}

	t.Run("times out", func(t *testing.T) {
		g := NewWithT(t)
		short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		defer cancel()
		g.Expect(tr.WaitFor(short, ref("u9"), "10", false)).To(MatchError(context.DeadlineExceeded))
	})

	t.Run("many waiters", func(t *testing.T) {
		g := NewWithT(t)
		done := make(chan error, 10)
		for range 10 {
			go func() { done <- tr.WaitFor(ctx, ref("u9"), "11", false) }()
		}
		g.Eventually(tr.Waiting, 20*time.Second).Should(BeTrue())
		ix.Upsert(link("a", "u9", 10, 11))
		for range 10 {
			g.Eventually(done, 20*time.Second).Should(Receive(BeNil()))
		}
	})
}
