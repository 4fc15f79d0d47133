package controllers

import (
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// TestStatusPatchIsMergeFromsStatusPart: the status-only patch is the part
// of client.MergeFrom's whole-object patch that the status subresource
// applies (status, and resourceVersion under a lock), for a first pass, a
// change of one condition and a field cleared.
func TestStatusPatchIsMergeFromsStatusPart(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	fresh := &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Name: "l", Namespace: "ns", Generation: 1, ResourceVersion: "42",
			Annotations: map[string]string{"a": "b"}},
		Spec: kurzv1alpha1.LinkSpec{Domain: "go.example.org", Key: "k", URL: "https://example.org/"},
	}
	domains := []kurzv1alpha1.Domain{{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns"},
		Spec: kurzv1alpha1.DomainSpec{Domain: "go.example.org"}}}

	settled := fresh.DeepCopy()
	setLinkStatus(settled, linkInputs{domains: domains}, now)
	noDomain := settled.DeepCopy()
	setLinkStatus(noDomain, linkInputs{}, now.Add(time.Minute))
	cleared := settled.DeepCopy()
	cleared.Status.ShortURL = ""
	cleared.Status.CreatedAt = nil

	for _, c := range []struct {
		name        string
		orig, after *kurzv1alpha1.Link
		lock        bool
	}{
		{"first pass, locked", fresh, settled, true},
		{"Ready changes", settled, noDomain, false},
		{"fields cleared", settled, cleared, false},
		{"nothing changes", settled, settled, false},
	} {
		p := statusPatch{before: statusOf(c.orig), after: statusOf(c.after)}
		want := client.MergeFrom(c.orig)
		if c.lock {
			p.resourceVersion = c.orig.ResourceVersion
			want = client.MergeFromWithOptions(c.orig, client.MergeFromWithOptimisticLock{})
		}
		got, err := p.Data(c.after)
		g.Expect(err).NotTo(HaveOccurred(), c.name)
		whole, err := want.Data(c.after)
		g.Expect(err).NotTo(HaveOccurred(), c.name)
		g.Expect(p.Type()).To(Equal(want.Type()))
		g.Expect(decode(g, got)).To(Equal(statusPart(g, whole)), c.name)
	}
	// A lock carries the resourceVersion the pass read.
	locked, err := statusPatch{before: statusOf(fresh), after: statusOf(settled), resourceVersion: "42"}.Data(settled)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(decode(g, locked)).To(HaveKeyWithValue("metadata", map[string]any{"resourceVersion": "42"}))
}

func decode(g Gomega, b []byte) map[string]any {
	var m map[string]any
	g.Expect(json.Unmarshal(b, &m)).To(Succeed())
	return m
}

// statusPart keeps what the status subresource applies of a patch.
func statusPart(g Gomega, b []byte) map[string]any {
	m := decode(g, b)
	out := map[string]any{}
	if s, ok := m["status"]; ok {
		out["status"] = s
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		if rv, ok := md["resourceVersion"]; ok {
			out["metadata"] = map[string]any{"resourceVersion": rv}
		}
	}
	return out
}

// BenchmarkStatusPatchData compares what computing a Link's first status
// patch allocates: from the two statuses, and from the two whole objects
// (client.MergeFrom, before). Compare B/op and allocs/op; the times are
// for a quiet machine (flock /tmp/kurz-measure.lock).
func BenchmarkStatusPatchData(b *testing.B) {
	fresh := &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Name: "l0000007", Namespace: "default", Generation: 1, ResourceVersion: "42"},
		Spec: kurzv1alpha1.LinkSpec{Domain: "bench.kurz.test", Key: "k7",
			URL: "https://www.example.com/articles/7/a-page-about-something?ref=newsletter"},
	}
	domains := []kurzv1alpha1.Domain{{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "default"},
		Spec: kurzv1alpha1.DomainSpec{Domain: "bench.kurz.test"}}}
	settled := fresh.DeepCopy()
	setLinkStatus(settled, linkInputs{domains: domains}, time.Now())
	b.Run("statuses", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p := statusPatch{before: statusOf(fresh), after: statusOf(settled), resourceVersion: "42"}
			if _, err := p.Data(settled); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("whole objects", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := client.MergeFromWithOptions(fresh, client.MergeFromWithOptimisticLock{}).Data(settled); err != nil {
				b.Fatal(err)
			}
		}
	})
}
