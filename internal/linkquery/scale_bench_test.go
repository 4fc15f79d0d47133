package linkquery

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// scaleLinkSet is the workspace make bench-scale measures the API on:
// benchLinks links created one after another (the informer lists them in
// that order, by name), all active, none clicked yet, and the newest 1 000
// tagged bench-tag by bulk updates (so updated later than the rest).
func scaleLinkSet() []*kurzv1alpha1.Link {
	rng := rand.New(rand.NewPCG(3, 4))
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tagged := start.Add(2 * benchLinks * time.Second)
	links := make([]*kurzv1alpha1.Link, benchLinks)
	for i := range links {
		created := metav1.NewMicroTime(start.Add(time.Duration(i) * time.Second))
		l := &kurzv1alpha1.Link{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: "bench", Name: fmt.Sprintf("l%07d", i),
				UID: types.UID(fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), 0x8000|rng.IntN(1<<14), rng.Uint64()&(1<<48-1))),
			},
			Spec: kurzv1alpha1.LinkSpec{
				Domain: "go.example.com", Key: fmt.Sprintf("k%d", i),
				URL: kurzv1alpha1.URL(fmt.Sprintf("https://www.example.com/%d", i)),
			},
			Status: kurzv1alpha1.LinkStatus{CreatedAt: &created, UpdatedAt: &created},
		}
		if i >= benchLinks-1000 {
			u := metav1.NewMicroTime(tagged.Add(time.Duration(benchLinks-i) * time.Millisecond))
			l.Spec.Tags, l.Status.UpdatedAt = []string{"bench-tag"}, &u
		}
		l.Status.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Reason: kurzv1alpha1.ReasonActive}}
		links[i] = l
	}
	return links
}

// BenchmarkQueryScale runs the queries of make bench-scale's API figures
// on its workspace, first and last page, through Query as GET
// /api/v1/links does.
func BenchmarkQueryScale(b *testing.B) {
	ix := loadIndex(scaleLinkSet())
	for _, bc := range []struct {
		name string
		q    Query
	}{
		{"tag", Query{Tags: []string{"bench-tag"}}},
		{"key", Query{Sort: Sort{By: ByKey}}},
		{"-clicks", Query{Sort: Sort{By: ByClicks, Reverse: true}}},
		{"last_click", Query{Sort: Sort{By: ByLastClick}}},
		{"state", Query{States: []State{StateActive}}},
		{"exclude_tag-updated", Query{ExcludeTags: []string{"bench-tag"}, Sort: Sort{By: ByUpdated}}},
	} {
		benchPages(b, ix, bc.name, bc.q)
	}
}
