package timestamps

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

func TestStampLink(t *testing.T) {
	g := NewWithT(t)
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	l := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Generation: 1}}

	g.Expect(StampLink(l, t0)).To(BeTrue(), "a new link is stamped")
	g.Expect(l.Status.CreatedAt.Time).To(Equal(t0.Truncate(time.Microsecond)))
	g.Expect(l.Status.UpdatedAt.Time).To(Equal(t0.Truncate(time.Microsecond)))
	g.Expect(l.Status.UpdatedGeneration).To(Equal(int64(1)))

	g.Expect(StampLink(l, t0.Add(time.Second))).To(BeFalse(), "the same generation is stamped once")
	g.Expect(l.Status.UpdatedAt.Time).To(Equal(t0.Truncate(time.Microsecond)))

	l.Generation = 2
	t1 := t0.Add(time.Minute)
	g.Expect(StampLink(l, t1)).To(BeTrue(), "a spec change is stamped")
	g.Expect(l.Status.CreatedAt.Time).To(Equal(t0.Truncate(time.Microsecond)), "createdAt never changes")
	g.Expect(l.Status.UpdatedAt.Time).To(Equal(t1.Truncate(time.Microsecond)))
	g.Expect(l.Status.UpdatedGeneration).To(Equal(int64(2)))
}

func TestPrint(t *testing.T) {
	g := NewWithT(t)
	mt := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))
	g.Expect(Print(&mt, metav1.Time{})).To(Equal("2026-01-02T03:04:05.000006Z"))
	meta := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)))
	g.Expect(Print(nil, meta)).To(Equal("2026-01-02T02:04:05.000000Z"))
}

func TestTouchLinkRefreshesTheSameGeneration(t *testing.T) {
	g := NewWithT(t)
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	StampLink(l, t0)

	t1 := t0.Add(time.Second)
	g.Expect(TouchLink(l, t1)).To(BeTrue())
	g.Expect(l.Status.UpdatedAt.Time).To(Equal(t1), "an API update refreshes updated_at without a spec change")
	g.Expect(l.Status.CreatedAt.Time).To(Equal(t0))
	g.Expect(l.Status.UpdatedGeneration).To(Equal(int64(3)))
	g.Expect(StampLink(l, t1.Add(time.Second))).To(BeFalse(), "the controller sees the generation stamped")
}
