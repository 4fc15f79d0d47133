package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

// A Link the API created announces its creation time in an annotation
// instead of a status write of the API's own; the controller's first
// status write, the one that sets Ready, carries it into createdAt and
// updatedAt. So an API-created Link costs two writes (the create and that
// one): the first change after the create already holds everything. A
// stamp written apart from Ready, or the controller's own clock in place
// of the API's time, fails here.
func TestLinkFirstStatusWriteCarriesTheAnnouncedTime(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns, h := startWithDomain(t, "an")
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx, &kurzv1alpha1.LinkList{}, client.InNamespace(ns))
	g.Expect(err).NotTo(HaveOccurred())
	defer w.Stop()

	// Earlier than any clock reading of the controller's: its own stamp
	// would differ.
	at := time.Now().Add(-3 * time.Second).UTC().Truncate(time.Microsecond)
	l := newLink(ns, "l", h, "k")
	timestamps.Announce(l, at)
	g.Expect(k8sClient.Create(ctx, l)).To(Succeed())

	first := firstChange(t, w, l)
	g.Expect(meta.FindStatusCondition(first.Status.Conditions, kurzv1alpha1.ConditionReady)).NotTo(BeNil(), "Ready in the first status write")
	g.Expect(first.Status.ObservedGeneration).To(Equal(int64(1)))
	g.Expect(first.Status.CreatedAt).NotTo(BeNil(), "the stamps in the first status write")
	g.Expect(first.Status.CreatedAt.Time.UTC()).To(Equal(at))
	g.Expect(first.Status.UpdatedAt.Time.UTC()).To(Equal(at))
	g.Expect(first.Status.UpdatedGeneration).To(Equal(int64(1)))
}

// firstChange returns l as the first write after its create left it.
func firstChange(t *testing.T, w watch.Interface, l *kurzv1alpha1.Link) *kurzv1alpha1.Link {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			got, isLink := ev.Object.(*kurzv1alpha1.Link)
			if ev.Type == watch.Modified && isLink && got.UID == l.UID {
				return got
			}
		case <-deadline:
			t.Fatalf("no write to %s after its create", l.Name)
		}
	}
}
