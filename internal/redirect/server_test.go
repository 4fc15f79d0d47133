package redirect

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

func ptr[T any](v T) *T { return &v }

func createDomain(t *testing.T, ns, name, host string, spec func(*kurzv1alpha1.DomainSpec)) *kurzv1alpha1.Domain {
	t.Helper()
	d := &kurzv1alpha1.Domain{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kurzv1alpha1.DomainSpec{Domain: kurzv1alpha1.Hostname(host)}}
	if spec != nil {
		spec(&d.Spec)
	}
	NewWithT(t).Expect(k8s.Create(context.Background(), d)).To(Succeed())
	return d
}

// namespaceWithDomain creates a namespace holding a Domain "d" of
// <namespace>.<zone> and returns the namespace and the hostname, unique to
// the test (the first Domain claiming a hostname keeps it).
func namespaceWithDomain(t *testing.T, zone string) (ns, host string) {
	t.Helper()
	ns = newNamespace(t)
	host = ns + "." + zone
	createDomain(t, ns, "d", host, nil)
	return ns, host
}

// twoLinks creates a namespace holding a Domain of <namespace>.<zone> and
// the Links k1 and k2 on it, and returns the namespace and the hostname.
func twoLinks(t *testing.T, zone string) (ns, host string) {
	t.Helper()
	ns, host = namespaceWithDomain(t, zone)
	createLink(t, ns, "k1", host, "k1", "https://dest.example/", nil)
	createLink(t, ns, "k2", host, "k2", "https://dest.example/", nil)
	return ns, host
}

// oneLink creates a namespace holding a Domain "d" of host and a Link "l"
// with key "k" to https://dest.example/, changed by spec when not nil, and
// returns the namespace and the Link.
func oneLink(t *testing.T, host string, spec func(*kurzv1alpha1.LinkSpec)) (string, *kurzv1alpha1.Link) {
	t.Helper()
	ns := newNamespace(t)
	createDomain(t, ns, "d", host, nil)
	return ns, createLink(t, ns, "l", host, "k", "https://dest.example/", spec)
}

// twoLinksClicks polls the clicks of twoLinks' k1 and k2.
func twoLinksClicks(t *testing.T, ns string) func() []int64 {
	return func() []int64 { return []int64{clicksOf(t, ns, "k1"), clicksOf(t, ns, "k2")} }
}

func createLink(t *testing.T, ns, name, host, key, url string, spec func(*kurzv1alpha1.LinkSpec)) *kurzv1alpha1.Link {
	t.Helper()
	l := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(host), Key: key, URL: kurzv1alpha1.URL(url)}}
	if spec != nil {
		spec(&l.Spec)
	}
	NewWithT(t).Expect(k8s.Create(context.Background(), l)).To(Succeed())
	return l
}

func TestAnswers(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	createDomain(t, ns, "full", "full.test", func(s *kurzv1alpha1.DomainSpec) {
		s.NotFoundURL = ptr(kurzv1alpha1.URL("https://full.example/404"))
		s.ExpiredURL = ptr(kurzv1alpha1.URL("https://full.example/expired"))
	})
	createDomain(t, ns, "bare", "bare.test", nil)
	past := metav1.NewTime(time.Now().Add(-time.Hour))
	future := metav1.NewTime(time.Now().Add(time.Hour))
	createLink(t, ns, "live", "full.test", "live", "https://dest.example/p?a=1", func(s *kurzv1alpha1.LinkSpec) {
		s.IOS = ptr(kurzv1alpha1.URL("https://apps.example/ios"))
		s.Android = ptr(kurzv1alpha1.URL("https://play.example/android"))
		s.UTM = &kurzv1alpha1.LinkUTM{Source: ptr("kurz"), Medium: ptr("email"), Campaign: ptr("a b")}
		s.ExpiresAt = &future
	})
	createLink(t, ns, "presetutm", "full.test", "preset", "https://dest.example/q?utm_source=own", func(s *kurzv1alpha1.LinkSpec) {
		s.UTM = &kurzv1alpha1.LinkUTM{Source: ptr("kurz"), Term: ptr("t")}
	})
	createLink(t, ns, "exp-own", "full.test", "exp-own", "https://dest.example/", func(s *kurzv1alpha1.LinkSpec) {
		s.ExpiresAt = &past
		s.ExpiredRedirectURL = ptr(kurzv1alpha1.URL("https://own.example/expired"))
	})
	createLink(t, ns, "exp-dom", "full.test", "exp-dom", "https://dest.example/", func(s *kurzv1alpha1.LinkSpec) { s.ExpiresAt = &past })
	createLink(t, ns, "exp-none", "bare.test", "exp-none", "https://dest.example/", func(s *kurzv1alpha1.LinkSpec) { s.ExpiresAt = &past })
	createLink(t, ns, "bare-live", "bare.test", "x", "https://dest.example/x", nil)

	ts := startServer(t, testOptions())
	g.Eventually(func() int { return do(t, "GET", ts.base, "bare.test", "/x", nil).status }, 30*time.Second).Should(Equal(http.StatusFound))
	before := counterValue(outcomeCounters[outcomeRedirect])

	const dest = "https://dest.example/p?a=1&utm_source=kurz&utm_medium=email&utm_campaign=a+b"
	iphone := map[string]string{"User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"}
	android := map[string]string{"User-Agent": "Mozilla/5.0 (Linux; Android 14; Pixel 8)"}
	for _, tc := range []struct {
		name, method, host, path string
		hdr                      map[string]string
		status                   int
		location                 string
	}{
		{"live", "GET", "full.test", "/live", nil, 302, dest},
		{"host case, port, dot", "GET", "FULL.Test.:8080", "/live", nil, 302, dest},
		{"HEAD", "HEAD", "full.test", "/live", nil, 302, dest},
		{"iPhone", "GET", "full.test", "/live", iphone, 302, "https://apps.example/ios?utm_source=kurz&utm_medium=email&utm_campaign=a+b"},
		{"Android", "GET", "full.test", "/live", android, 302, "https://play.example/android?utm_source=kurz&utm_medium=email&utm_campaign=a+b"},
		{"no targets: url for iPhone", "GET", "bare.test", "/x", iphone, 302, "https://dest.example/x"},
		{"query forwarded", "GET", "full.test", "/live?a=2&ref=tw", nil, 302,
			"https://dest.example/p?utm_source=kurz&utm_medium=email&utm_campaign=a+b&a=2&ref=tw"},
		{"utm kept when present", "GET", "full.test", "/preset", nil, 302, "https://dest.example/q?utm_source=own&utm_term=t"},
		{"unknown host", "GET", "nope.test", "/live", nil, 404, ""},
		{"root with notFoundURL", "GET", "full.test", "/", nil, 302, "https://full.example/404"},
		{"root without", "GET", "bare.test", "/", nil, 404, ""},
		{"unknown key with notFoundURL", "GET", "full.test", "/missing", nil, 302, "https://full.example/404"},
		{"not a key", "GET", "full.test", "/a/b", nil, 302, "https://full.example/404"},
		{"unknown key without", "GET", "bare.test", "/missing", nil, 404, ""},
		{"expired: link target", "GET", "full.test", "/exp-own", nil, 302, "https://own.example/expired"},
		{"expired: domain target", "GET", "full.test", "/exp-dom", nil, 302, "https://full.example/expired"},
		{"expired: gone", "GET", "bare.test", "/exp-none", nil, 410, ""},
		{"POST to an open link", "POST", "full.test", "/live", nil, 405, ""},
		{"PUT", "PUT", "full.test", "/live", nil, 405, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			a := do(t, tc.method, ts.base, tc.host, tc.path, tc.hdr)
			g.Expect(a.status).To(Equal(tc.status))
			g.Expect(a.location).To(Equal(tc.location))
			g.Expect(a.header.Get("Cache-Control")).To(ContainSubstring("no-store"))
			g.Expect(a.header.Get("X-Robots-Tag")).To(Equal("noindex"))
			if tc.status >= 400 && tc.method != "HEAD" {
				g.Expect(len(a.body)).To(BeNumerically("<", 100))
				g.Expect(a.header.Get("Content-Type")).To(HavePrefix("text/plain"))
			}
		})
	}
	// Eight answers above went to a destination (the metric counts HEAD too;
	// clicks do not).
	g.Expect(counterValue(outcomeCounters[outcomeRedirect]) - before).To(Equal(8.0))

	// Edits reach the index: a new destination, then the link goes away.
	var l kurzv1alpha1.Link
	g.Expect(k8s.Get(context.Background(), keyOf(ns, "bare-live"), &l)).To(Succeed())
	l.Spec.URL = "https://dest.example/changed"
	g.Expect(k8s.Update(context.Background(), &l)).To(Succeed())
	g.Eventually(func() string { return do(t, "GET", ts.base, "bare.test", "/x", nil).location }, 10*time.Second).
		Should(Equal("https://dest.example/changed"))
	g.Expect(k8s.Delete(context.Background(), &l)).To(Succeed())
	g.Eventually(func() int { return do(t, "GET", ts.base, "bare.test", "/x", nil).status }, 10*time.Second).Should(Equal(404))
}

func TestClaimsAcrossNamespaces(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	owner, other := newNamespace(t), newNamespace(t)
	createDomain(t, owner, "d", "claimed.test", nil)
	createLink(t, owner, "a-first", "claimed.test", "k", "https://dest.example/first", nil)
	createLink(t, owner, "b-second", "claimed.test", "k", "https://dest.example/second", nil)
	ts := startServer(t, testOptions())
	// Created later (or in the same second, then by namespace order), the
	// other namespace's claim never serves.
	createDomain(t, other, "d", "claimed.test", nil)
	createLink(t, other, "l", "claimed.test", "theirs", "https://dest.example/theirs", nil)

	g.Eventually(func() string { return do(t, "GET", ts.base, "claimed.test", "/k", nil).location }, 30*time.Second).
		Should(Equal("https://dest.example/first"))
	g.Consistently(func() int { return do(t, "GET", ts.base, "claimed.test", "/theirs", nil).status }, time.Second).Should(Equal(404))

	// The key's holder goes: the conflicting Link takes over.
	g.Expect(k8s.Delete(context.Background(), &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: owner, Name: "a-first"}})).To(Succeed())
	g.Eventually(func() string { return do(t, "GET", ts.base, "claimed.test", "/k", nil).location }, 10*time.Second).
		Should(Equal("https://dest.example/second"))
}

func TestRedirectStatusFlag(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	for _, code := range []int{200, 303, 404, 0} {
		o := DefaultOptions()
		o.Status = code
		g.Expect(o.Validate()).To(MatchError(ContainSubstring("--redirect-status")))
	}
	ns := newNamespace(t)
	createDomain(t, ns, "d", "status.test", func(s *kurzv1alpha1.DomainSpec) { s.NotFoundURL = ptr(kurzv1alpha1.URL("https://nf.example/")) })
	createLink(t, ns, "l", "status.test", "k", "https://dest.example/", nil)
	o := testOptions()
	o.Status = http.StatusPermanentRedirect
	ts := startServer(t, o)
	g.Eventually(func() int { return do(t, "GET", ts.base, "status.test", "/k", nil).status }, 30*time.Second).Should(Equal(308))
	g.Expect(do(t, "GET", ts.base, "status.test", "/", nil).status).To(Equal(308))
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

// TestLargeRequestsAndRequestErrors: browsers send a parent domain's cookies
// and long campaign queries; those clicks must redirect. What fasthttp cannot
// read at all is still answered uncacheable and unindexed.
func TestLargeRequestsAndRequestErrors(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	createDomain(t, ns, "big", "big.test", nil)
	createLink(t, ns, "big", "big.test", "k", "https://dest.example/", nil)
	ts := startServer(t, testOptions())
	g.Eventually(func() int { return do(t, "GET", ts.base, "big.test", "/k", nil).status }, 30*time.Second).Should(Equal(http.StatusFound))

	long := do(t, "GET", ts.base, "big.test", "/k?q="+strings.Repeat("x", 6000), map[string]string{"Cookie": "parent=" + strings.Repeat("c", 8000)})
	g.Expect(long.status).To(Equal(http.StatusFound))
	g.Expect(long.location).To(HavePrefix("https://dest.example/?q=xxx"))

	keepAliveHeaders(t, ts.srv.Addr().String(), "big.test", "/k")

	huge := do(t, "GET", ts.base, "big.test", "/k", map[string]string{"Cookie": "parent=" + strings.Repeat("c", 64<<10)})
	g.Expect(huge.status).To(Equal(http.StatusRequestHeaderFieldsTooLarge))
	g.Expect(huge.header.Get("Cache-Control")).To(ContainSubstring("no-store"))
	g.Expect(huge.header.Get("X-Robots-Tag")).To(Equal("noindex"))
}
