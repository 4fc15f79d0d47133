package gauges

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// TestTallyFollowsEvents: a Link counts under its state as it is added,
// moves when an update changes its state, and leaves that state when it is
// deleted, also when the informer missed the delete and only knows the
// object as it last saw it.
func TestTallyFollowsEvents(t *testing.T) {
	tl := &tally{state: func(o any) string { return LinkState(o.(*kurzv1alpha1.Link).Status.Conditions) }, counts: map[string]int{}}
	link := func(name, reason string) *kurzv1alpha1.Link {
		l := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: "ws", Name: name}}
		if reason != "" {
			l.Status.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: reason}}
		}
		return l
	}
	a, b := link("a", ""), link("b", "")
	tl.OnAdd(a, true)
	tl.OnAdd(b, true)
	activeA, expiredB := link("a", kurzv1alpha1.ReasonActive), link("b", kurzv1alpha1.ReasonExpired)
	tl.OnUpdate(a, activeA)
	tl.OnUpdate(b, expiredB)
	tl.OnUpdate(activeA, activeA) // a resync: no change
	tl.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "ws/b", Obj: expiredB})
	got := make([]int, len(LinkStates))
	tl.read(LinkStates, got)
	want := map[string]int{LinkActive: 1}
	for i, s := range LinkStates {
		if got[i] != want[s] {
			t.Errorf("kurz_links{state=%q} = %d, want %d", s, got[i], want[s])
		}
	}
}
