package timestamps

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// announcedLink is a Link the API announced at, which kube-apiserver
// created at creation (whole seconds).
func announcedLink(at time.Time, creation time.Time) *kurzv1alpha1.Link {
	l := &kurzv1alpha1.Link{}
	Announce(l, at)
	l.Generation, l.CreationTimestamp = 1, metav1.NewTime(creation)
	return l
}

// The controller records the API's time, however late it comes, and the
// readers answer it before and after.
func TestStampLinkRecordsTheAnnouncedTime(t *testing.T) {
	at := time.Date(2026, 11, 26, 7, 0, 0, 999999123, time.UTC)
	want := at.Truncate(time.Microsecond)
	creation := time.Date(2026, 11, 26, 7, 0, 1, 0, time.UTC) // the second turned between
	for _, late := range []time.Duration{10 * time.Millisecond, time.Hour} {
		g := NewWithT(t)
		l := announcedLink(at, creation)
		g.Expect(l.Annotations).To(HaveKeyWithValue(kurzv1alpha1.LinkCreatedAtAnnotation, "2026-11-26T07:00:00.999999Z"))
		g.Expect(LinkCreated(l)).To(Equal(want), "before the controller's write")
		g.Expect(LinkUpdated(l)).To(Equal(want))

		g.Expect(StampLink(l, creation.Add(late))).To(BeTrue())
		g.Expect(l.Status.CreatedAt.Time).To(Equal(want), "reached %s late", late)
		g.Expect(l.Status.UpdatedAt.Time).To(Equal(want))
		g.Expect(l.Status.UpdatedGeneration).To(Equal(int64(1)))
		g.Expect(LinkCreated(l)).To(Equal(want), "after it")
		g.Expect(LinkUpdated(l)).To(Equal(want))
	}
}

// An API update before the controller's first write (TouchLink) records
// the announced creation time too, and its own update time.
func TestTouchLinkRecordsTheAnnouncedTime(t *testing.T) {
	g := NewWithT(t)
	at := time.Date(2026, 11, 26, 7, 0, 0, 500000000, time.UTC)
	l := announcedLink(at, at.Truncate(time.Second))
	l.Generation = 2
	now := at.Add(3 * time.Second)
	g.Expect(TouchLink(l, now)).To(BeTrue())
	g.Expect(l.Status.CreatedAt.Time).To(Equal(at))
	g.Expect(l.Status.UpdatedAt.Time).To(Equal(now))
	g.Expect(LinkUpdated(l)).To(Equal(now))
}

// A time that is not the Link's own (a manifest copied from an older Link,
// a bad value) is ignored: the Link is dated as one applied with kubectl.
func TestAnnouncedTimeFromElsewhereIsIgnored(t *testing.T) {
	creation := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	for name, value := range map[string]string{
		"copied from a Link a day older": "2026-11-25T07:00:00.000000Z",
		"an hour in the future":          "2026-11-26T08:00:00.000000Z",
		"not a time":                     "yesterday",
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			l := announcedLink(creation, creation)
			l.Annotations[kurzv1alpha1.LinkCreatedAtAnnotation] = value
			g.Expect(LinkCreated(l)).To(Equal(creation))
			g.Expect(LinkUpdated(l)).To(Equal(creation))
			now := creation.Add(500 * time.Millisecond)
			g.Expect(StampLink(l, now)).To(BeTrue())
			g.Expect(l.Status.CreatedAt.Time).To(Equal(now), "the controller's own rule (createdAt)")
		})
	}

	t.Run("within the skew", func(t *testing.T) {
		g := NewWithT(t)
		at := creation.Add(-30 * time.Second) // a create that waited in kube-apiserver's queue
		g.Expect(LinkCreated(announcedLink(at, creation))).To(Equal(at))
	})
}

// A Link without the annotation (kubectl) reads as before.
func TestLinkCreatedWithoutAnnouncement(t *testing.T) {
	g := NewWithT(t)
	creation := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	l := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Generation: 1, CreationTimestamp: metav1.NewTime(creation)}}
	g.Expect(LinkCreated(l)).To(Equal(creation))
	g.Expect(LinkUpdated(l)).To(Equal(creation))
	stamped := creation.Add(1500 * time.Millisecond)
	StampLink(l, stamped)
	g.Expect(LinkCreated(l)).To(Equal(stamped))
	g.Expect(LinkUpdated(l)).To(Equal(stamped))
}
