package restapi

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// writeTestLink creates a Link named name in ns straight in kube-apiserver.
func writeTestLink(t *testing.T, ns, name string) *kurzv1alpha1.Link {
	t.Helper()
	l := &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       kurzv1alpha1.LinkSpec{Domain: "writes.example.test", Key: name, URL: kurzv1alpha1.URL("https://example.com/" + name)},
	}
	NewWithT(t).Expect(k8s.Create(context.Background(), l)).To(Succeed())
	return l
}

// isNotFoundAnswer reports whether err answers 404 "Link not found.".
func isNotFoundAnswer(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.status == http.StatusNotFound && ae.message == "Link not found."
}

// The shared write helpers, against kube-apiserver itself (no cache): a
// write to an object replaced under the same name is a 404, decided by a
// live read; a write that only lost a race is applied again and succeeds;
// a conflict on an object that is still there stays a conflict.
func TestWritesDecideNotFoundByLiveRead(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "writes-"}}
	g.Expect(k8s.Create(ctx, ns)).To(Succeed())
	s := newServer(k8s, k8s, nil, DefaultOptions())

	t.Run("replaced object", func(t *testing.T) {
		g := NewWithT(t)
		stale := writeTestLink(t, ns.Name, "replaced")
		g.Expect(k8s.Delete(ctx, stale.DeepCopy())).To(Succeed())
		successor := writeTestLink(t, ns.Name, "replaced")

		_, err := s.links.update(ctx, s, stale.DeepCopy(), func(l *kurzv1alpha1.Link) { l.Spec.URL = "https://example.com/changed" })
		g.Expect(isNotFoundAnswer(err)).To(BeTrue(), "update: %v", err)
		g.Expect(isNotFoundAnswer(s.links.delete(ctx, s, stale.DeepCopy()))).To(BeTrue())

		// The successor, which owns the name now, is untouched.
		var now kurzv1alpha1.Link
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(successor), &now)).To(Succeed())
		g.Expect(now.UID).To(Equal(successor.UID))
		g.Expect(now.Spec.URL).To(Equal(successor.Spec.URL))
	})

	t.Run("deleted object", func(t *testing.T) {
		g := NewWithT(t)
		gone := writeTestLink(t, ns.Name, "deleted")
		g.Expect(k8s.Delete(ctx, gone.DeepCopy())).To(Succeed())
		_, err := s.links.update(ctx, s, gone.DeepCopy(), func(*kurzv1alpha1.Link) {})
		g.Expect(isNotFoundAnswer(err)).To(BeTrue(), "update: %v", err)
		g.Expect(isNotFoundAnswer(s.links.delete(ctx, s, gone))).To(BeTrue())
	})

	t.Run("stale resourceVersion", func(t *testing.T) {
		g := NewWithT(t)
		stale := writeTestLink(t, ns.Name, "stale")
		other := stale.DeepCopy()
		other.Spec.Tags = []string{"kubectl"}
		g.Expect(k8s.Update(ctx, other)).To(Succeed())

		got, err := s.links.update(ctx, s, stale.DeepCopy(), func(l *kurzv1alpha1.Link) { l.Spec.URL = "https://example.com/api" })
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Spec.URL).To(BeEquivalentTo("https://example.com/api"))
		g.Expect(got.Spec.Tags).To(Equal([]string{"kubectl"}), "applied to what was there")
	})

	t.Run("conflict on a live object", func(t *testing.T) {
		g := NewWithT(t)
		live := writeTestLink(t, ns.Name, "live")
		conflict := apierrors.NewConflict(kurzv1alpha1.GroupVersion.WithResource("links").GroupResource(), live.Name, errors.New("the object has been modified"))
		err := s.links.writeError(ctx, s, live, conflict)
		g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
	})
}
