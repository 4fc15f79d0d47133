package clicks

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// BenchmarkPendingLinkMemory measures what a Link whose clicks cannot be
// written costs while the API server is away: its counter (which the index
// holds for every Link anyway) and queue slot, and, when its last patch got
// no answer, that patch kept to be settled (here with three writers in
// status.clickWriters). Reported as B/pending-link and B/unsure-link.
func BenchmarkPendingLinkMemory(b *testing.B) {
	const links = 10000
	w := newWriter(NewQueue(), nil, nil, 1)
	now := time.Now()
	l := kurzv1alpha1.Link{}
	l.Namespace, l.Name, l.ResourceVersion = "workspace-0123456789", "link-0123456789", "123456789"
	l.Status.Clicks = 123456
	for i := range 3 {
		l.Status.ClickWriters = append(l.Status.ClickWriters, kurzv1alpha1.ClickWriter{
			ID: fmt.Sprintf("kurz-7d9f8c6b5-x2x4z-%08x", i), Seq: 1000 + int64(i), Time: metav1.NewTime(now)})
	}
	var pending, unsure float64
	for b.Loop() {
		q := NewQueue()
		m0 := heap()
		counters := make([]*Counter, links)
		for i := range counters {
			counters[i] = q.newCounter(Link{UID: types.UID(fmt.Sprintf("0b6c1f9e-2f2c-4c1e-9a57-%012d", i)), Namespace: l.Namespace, Name: l.Name})
			counters[i].Click(now.UnixNano())
		}
		m1 := heap()
		unsures := make(map[types.UID]*unsureWrite, links)
		for _, c := range counters {
			unsures[c.link.UID] = w.patchFor(&l, 1, now.UnixNano())
		}
		m2 := heap()
		pending += float64(m1-m0) / links
		unsure += float64(m2-m1) / links
		runtime.KeepAlive(counters)
		runtime.KeepAlive(unsures)
	}
	b.ReportMetric(pending/float64(b.N), "B/pending-link")
	b.ReportMetric(unsure/float64(b.N), "B/unsure-link")
}

// BenchmarkClick measures what a redirect spends counting its click: a
// Slot's click once its Counter is made, from one goroutine and from every
// core at once on one Link:
// go test -run '^$' -bench Click -benchmem ./internal/redirect/clicks/
func BenchmarkClick(b *testing.B) {
	l := Link{UID: "0b6c1f9e-2f2c-4c1e-9a57-000000000001", Namespace: "workspace", Name: "link"}
	s := NewQueue().NewSlot(l.UID)
	now := time.Now().UnixNano()
	s.Click(&l, now)
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Click(&l, now)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				s.Click(&l, now)
			}
		})
	})
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
