package controllers_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	lua "github.com/yuin/gopher-lua"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// health is what GitOps tools make of an object: kstatus (Flux) and the
// Argo CD health script of its kind.
type health struct {
	KStatus     status.Status
	Argo        string
	ArgoMessage string
}

// healthOf fetches obj from kube-apiserver as unstructured (what Flux and
// Argo CD read) and computes both.
func healthOf(t *testing.T, obj client.Object, strip ...string) func(Gomega) health {
	return func(g Gomega) health {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(kurzv1alpha1.GroupVersion.WithKind(kindOf(obj)))
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), u)).To(Succeed())
		for _, field := range strip {
			unstructured.RemoveNestedField(u.Object, field)
		}
		res, err := status.Compute(u)
		g.Expect(err).NotTo(HaveOccurred())
		argo, msg, err := argoHealth(kindOf(obj), u)
		g.Expect(err).NotTo(HaveOccurred())
		return health{KStatus: res.Status, Argo: argo, ArgoMessage: msg}
	}
}

func kindOf(obj client.Object) string {
	if _, ok := obj.(*kurzv1alpha1.Domain); ok {
		return "Domain"
	}
	return "Link"
}

// reads is a matcher for a health: kstatus status, Argo CD status and a
// part of Argo CD's message.
func reads(k status.Status, argo, msg string) types.GomegaMatcher {
	return SatisfyAll(HaveField("KStatus", k), HaveField("Argo", argo), HaveField("ArgoMessage", ContainSubstring(msg)))
}

// TestGitOpsHealthOfEveryState drives real Links and Domains through every
// state the controllers reach, and checks what kstatus.Compute (Flux) and
// the Argo CD health scripts make of each: settled states are Current and
// Healthy, states waiting on the world InProgress and Progressing, states
// only a person can settle Failed and Degraded, with the reason and
// message.
func TestGitOpsHealthOfEveryState(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := newDNS(t)
	hostname := targetedHost(t, srv, "go.health.test")
	nsA, nsB := newNamespace(t, "health-a"), newNamespace(t, "health-b")

	// Before any controller ran: no status at all.
	first := newLink(nsA, "first", hostname, "k")
	g.Expect(k8sClient.Create(ctx, first)).To(Succeed())
	// The CRD defaults status to observedGeneration 0, so kstatus reads the
	// new object as in progress (without a status it would be Current).
	g.Expect(healthOf(t, first)(g)).To(reads(status.InProgressStatus, "Progressing", "Waiting for kurz to reconcile the Link"))
	// The Argo CD script reads an object without any status (as from a
	// kurz without that default) as Progressing too.
	g.Expect(healthOf(t, first, "status")(g)).To(SatisfyAll(HaveField("Argo", "Progressing"),
		HaveField("ArgoMessage", "Waiting for kurz to reconcile the Link")))

	stop := start(t, newManager(t, cfg, testOptions(srv), nil))

	t.Log("Link waiting for its Domain: Reconciling")
	g.Eventually(readyOf(first), timeout, poll).Should(Equal(linkDomainNotFound))
	g.Eventually(healthOf(t, first), timeout, poll).Should(reads(status.InProgressStatus, "Progressing", "DomainNotFound: No Domain"))

	t.Log("verified Domain and active Link: Current")
	domA := createDomain(g, nsA, "go", hostname, verified)
	g.Eventually(healthOf(t, domA), timeout, poll).Should(reads(status.CurrentStatus, "Healthy", "Verified: "+hostname+" points at a redirect target"))
	g.Eventually(readyOf(first), timeout, poll).Should(Equal(linkActive))
	g.Eventually(healthOf(t, first), timeout, poll).Should(reads(status.CurrentStatus, "Healthy", "Active: The link serves"))

	t.Log("expired Link: a settled end state, Current")
	expired := newLink(nsA, "expired", hostname, "old")
	expired.Spec.ExpiresAt = &metav1.Time{Time: time.Now().Add(-time.Hour)}
	createReady(g, expired, linkExpired)
	g.Eventually(healthOf(t, expired), timeout, poll).Should(reads(status.CurrentStatus, "Healthy", "Expired: The link expired at"))

	t.Log("key conflict: Stalled")
	// Named after "first": creation times tie within a second, and ties
	// break on the name.
	dup := newLink(nsA, "second", hostname, "k")
	createReady(g, dup, linkKeyConflict)
	g.Eventually(healthOf(t, dup), timeout, poll).Should(reads(status.FailedStatus, "Degraded", "KeyConflict: Link first, which is older, holds the key"))

	t.Log("Domain waiting for DNS: Reconciling")
	waitDNS := createDomain(g, nsA, "pending", host(t, "pending.health.test"), pending)
	g.Eventually(healthOf(t, waitDNS), timeout, poll).Should(reads(status.InProgressStatus, "Progressing", "VerificationPending: Publish the TXT record"))

	t.Log("hostname held by another workspace: Domain and its Link Stalled")
	squat := createDomain(g, nsB, "go", hostname, claimed)
	g.Eventually(healthOf(t, squat), timeout, poll).Should(reads(status.FailedStatus, "Degraded", "DomainClaimed: The hostname "+hostname+" is held by"))
	squatLink := newLink(nsB, "l", hostname, "k")
	g.Expect(k8sClient.Create(ctx, squatLink)).To(Succeed())
	g.Eventually(healthOf(t, squatLink), timeout, poll).Should(reads(status.FailedStatus, "Degraded", "DomainClaimed: Domain "+hostname+" does not own its hostname"))

	t.Log("contested claim nobody holds: Domain and its Link wait for TXT")
	g.Expect(k8sClient.Delete(ctx, domA)).To(Succeed())
	g.Eventually(readyOf(squat), timeout, poll).Should(Equal(txtRequired))
	g.Eventually(healthOf(t, squat), timeout, poll).Should(reads(status.InProgressStatus, "Progressing", "TXTRequired: This Domain claimed "+hostname))
	g.Eventually(healthOf(t, squatLink), timeout, poll).Should(reads(status.InProgressStatus, "Progressing", "TXTRequired: Domain "+hostname+" does not own its hostname"))
	g.Eventually(healthOf(t, first), timeout, poll).Should(reads(status.InProgressStatus, "Progressing", "DomainNotFound: No Domain"))

	t.Log("an edit kurz has not reconciled yet: InProgress whatever the conditions")
	stop()
	update(g, waitDNS, func() { waitDNS.Spec.NotFoundURL = ptrURL("https://example.com/") })
	g.Expect(healthOf(t, waitDNS)(g)).To(reads(status.InProgressStatus, "Progressing", "Waiting for kurz to reconcile generation 2 of the Domain"))
	update(g, dup, func() { dup.Spec.Key = "other" })
	g.Expect(healthOf(t, dup)(g)).To(reads(status.InProgressStatus, "Progressing", "Waiting for kurz to reconcile generation 2 of the Link"))
}

func ptrURL(s string) *kurzv1alpha1.URL {
	u := kurzv1alpha1.URL(s)
	return &u
}

// argoHealth runs config/argocd/kurz.dev/<kind>/health.lua on u the way
// Argo CD does: gopher-lua with only the package, base and table libraries
// open (Argo CD adds a safe os library the scripts do not use), a
// one-second limit, and obj set to u converted as Argo CD converts it.
func argoHealth(kind string, u *unstructured.Unstructured) (string, string, error) {
	script, err := healthScript(kind)
	if err != nil {
		return "", "", err
	}
	return runHealth(script, u)
}

// runHealth runs one health script on u as Argo CD does.
func runHealth(script string, u *unstructured.Unstructured) (string, string, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			return "", "", err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, u.Object))
	if err := l.DoString(script); err != nil {
		return "", "", err
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", errNotTable
	}
	return lua.LVAsString(ret.RawGetString("status")), lua.LVAsString(ret.RawGetString("message")), nil
}
