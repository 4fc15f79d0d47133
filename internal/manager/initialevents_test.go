package manager

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestIndexesTakeTheFirstStream starts a replica over Links that exist
// already: kube-apiserver streams them as a watch-list, the indexes take
// them from the stream (the Feed completes, so the informer's own adds of
// them are skipped), every one redirects, and changes after the start reach
// the index through the informer's handlers as before.
func TestIndexesTakeTheFirstStream(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	host := unique("stream") + ".test"
	createDomain(t, ns, "go", host)
	const n = 40
	links := make([]*kurzv1alpha1.Link, n)
	for i := range links {
		links[i] = createLink(t, ns, fmt.Sprint("l", i), host, fmt.Sprint("k", i))
	}

	o := testOptions(t, newDNS(t), ns)
	o.EnableControllers = false
	m, err := New(ctx, cfg, o)
	g.Expect(err).NotTo(HaveOccurred())
	start(t, m, (*Manager).Start)

	g.Eventually(func() int { return readyz(o.HealthProbeBindAddress) }, timeout, poll).Should(Equal(http.StatusOK))
	stream, fed := m.initialLinks.Fed()
	g.Expect(fed).To(BeTrue(), "the Link informer's first list was a watch-list, fed as it streamed")
	g.Expect(stream.Events).To(BeNumerically(">=", n), "every Link of the namespace, and those of other tests")
	for i := range links {
		status, location := follow(o.Redirect.BindAddress, host, fmt.Sprint("k", i))
		g.Expect(status).To(Equal(http.StatusFound), "k%d", i)
		g.Expect(location).To(Equal(fmt.Sprint("https://example.com/k", i)))
	}

	// After the stream, the handlers: an edit, a delete and a new Link.
	edited := links[0].DeepCopy()
	edited.Spec.URL = "https://example.com/edited"
	g.Expect(k8sClient.Patch(ctx, edited, client.MergeFrom(links[0]))).To(Succeed())
	g.Expect(k8sClient.Delete(ctx, links[1])).To(Succeed())
	createLink(t, ns, "after", host, "after")
	g.Eventually(func() string { _, l := follow(o.Redirect.BindAddress, host, "k0"); return l }, timeout, poll).
		Should(Equal("https://example.com/edited"))
	g.Eventually(func() int { s, _ := follow(o.Redirect.BindAddress, host, "k1"); return s }, timeout, poll).
		Should(Equal(http.StatusNotFound))
	g.Eventually(func() int { s, _ := follow(o.Redirect.BindAddress, host, "after"); return s }, timeout, poll).
		Should(Equal(http.StatusFound))
}

// TestServesOnceFed: the redirect index holds the whole first list at the
// stream's bookmark, so the replica is ready and serves while the Link
// informer's handlers still work through that list's adds (0.6-1.6 s past
// the caches' sync at 100 000 and 1 000 000 Links). A handler on the
// shared listener that holds it at its first initial add stands for that
// backlog: the redirect index's own handler comes before it on the
// listener, after it nothing runs until it lets go.
func TestServesOnceFed(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	host := unique("fed") + ".test"
	createDomain(t, ns, "go", host)
	createLink(t, ns, "before", host, "before")

	o := testOptions(t, newDNS(t), ns)
	o.EnableControllers = false
	m, err := New(ctx, cfg, o)
	g.Expect(err).NotTo(HaveOccurred())
	inf, err := m.GetCache().GetInformer(ctx, &kurzv1alpha1.Link{})
	g.Expect(err).NotTo(HaveOccurred())
	held := make(chan struct{})
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, isInInitialList bool) {
			if isInInitialList {
				<-held
			}
		},
	})
	g.Expect(err).NotTo(HaveOccurred())
	start(t, m, (*Manager).Start)
	// Registered after start's cleanup, so it runs first: the manager's
	// stop waits for its listeners.
	var release sync.Once
	letGo := func() { release.Do(func() { close(held) }) }
	t.Cleanup(letGo)

	g.Eventually(func() int { return readyz(o.HealthProbeBindAddress) }, timeout, poll).Should(Equal(http.StatusOK))
	status, location := follow(o.Redirect.BindAddress, host, "before")
	g.Expect(status).To(Equal(http.StatusFound))
	g.Expect(location).To(Equal("https://example.com/before"))
	g.Expect(reg.HasSynced()).To(BeFalse(), "the held handler is still in the initial list")

	// Once the listener goes on, a Link created since reaches the index
	// through the handlers.
	createLink(t, ns, "after", host, "after")
	letGo()
	g.Eventually(reg.HasSynced, timeout, poll).Should(BeTrue())
	g.Eventually(func() int { s, _ := follow(o.Redirect.BindAddress, host, "after"); return s }, timeout, poll).
		Should(Equal(http.StatusFound))
}
