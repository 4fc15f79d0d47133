package restapi

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"

	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kurz-dev/kurz/internal/optionstest"
)

// TestTokenAudiences: an API token is a token minted for audience kurz. A
// token for kube-apiserver (a pod's token) is refused by the API, and a
// kurz token is refused by kube-apiserver.
func TestTokenAudiences(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)

	g.Expect(w.editor.do("GET", "/api/v1/links", nil).status).To(Equal(http.StatusOK))
	g.Expect(tokenReviews.askedAudiences(w.editor.token)).To(Equal([]string{"kurz"}))

	defaultToken := mintToken(t, w.ns, "editor") // no audience: kube-apiserver's
	c := &apiClient{t: t, base: baseURL, token: defaultToken}
	r := c.do("GET", "/api/v1/links", nil)
	g.Expect(r.status).To(Equal(http.StatusUnauthorized), "%s", r)
	g.Expect(r.body).To(Equal(map[string]any{"message": "Unauthenticated."}))
	g.Expect(tokenReviews.reviews(defaultToken)).To(Equal(1), "refused by a real TokenReview")

	// kube-apiserver itself: the default token is a credential there (so the
	// refusal above is the audience), the kurz token is not.
	whoAmI := func(token string) error {
		cfg := rest.AnonymousClientConfig(env.Config)
		cfg.BearerToken = token
		cs, err := kubernetes.NewForConfig(cfg)
		g.Expect(err).NotTo(HaveOccurred())
		_, err = cs.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return err
	}
	g.Expect(whoAmI(defaultToken)).To(Succeed())
	err := whoAmI(w.editor.token)
	g.Expect(apierrors.IsUnauthorized(err)).To(BeTrue(), "kube-apiserver answered %v", err)
}

func TestAudienceMatches(t *testing.T) {
	g := NewWithT(t)
	g.Expect(audienceMatches([]string{"kurz"}, []string{"kurz"})).To(BeTrue())
	g.Expect(audienceMatches([]string{"b"}, []string{"a", "b"})).To(BeTrue())
	// An authenticator that ignores audiences answers with none.
	g.Expect(audienceMatches(nil, []string{"kurz"})).To(BeFalse())
	g.Expect(audienceMatches([]string{"https://kubernetes.default.svc"}, []string{"kurz"})).To(BeFalse())
}

// TestConcurrentReviewsCollapse: requests that arrive together with a new
// token cost one TokenReview between them.
func TestConcurrentReviewsCollapse(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)
	token := mintToken(t, w.ns, "viewer", DefaultTokenAudience)

	const n = 20
	start := make(chan struct{})
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequest("GET", baseURL+"/api/v1/links", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			<-start
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		})
	}
	close(start)
	wg.Wait()
	close(statuses)
	for s := range statuses {
		g.Expect(s).To(Equal(http.StatusOK))
	}
	g.Expect(tokenReviews.reviews(token)).To(Equal(1))
}

// TestUnauthenticatedFlood: unknown tokens from one address are cut off
// after the limit, before any TokenReview, while known callers go on; a
// flood of refused tokens spread over many addresses fills the cache of
// refusals, not that of good callers.
func TestUnauthenticatedFlood(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)
	attacker := uniqueAddress()
	good := &apiClient{t: t, base: limitedURL, token: w.viewer.token, forwardedFor: attacker}
	g.Expect(good.do("GET", "/api/v1/links", nil).status).To(Equal(http.StatusOK))
	g.Expect(tokenReviews.reviews(good.token)).To(Equal(1))

	// The good caller's first request took one from the address's budget.
	var bad []string
	for range testUnauthenticatedLimit - 1 {
		bad = append(bad, fakeJWT())
		r := (&apiClient{t: t, base: limitedURL, token: bad[len(bad)-1], forwardedFor: attacker}).do("GET", "/api/v1/links", nil)
		g.Expect(r.status).To(Equal(http.StatusUnauthorized), "%s", r)
	}
	fresh := fakeJWT()
	for _, tok := range []string{fresh, bad[0]} { // unknown, and known to be bad
		r := (&apiClient{t: t, base: limitedURL, token: tok, forwardedFor: attacker}).do("GET", "/api/v1/links", nil)
		g.Expect(r.status).To(Equal(http.StatusTooManyRequests), "%s", r)
		g.Expect(r.body).To(Equal(map[string]any{"message": "Too Many Attempts."}))
		g.Expect(r.header.Get("Retry-After")).To(MatchRegexp(`^[1-9][0-9]*$`))
	}
	g.Expect(tokenReviews.reviews(fresh)).To(Equal(0), "no review past the limit")
	g.Expect(tokenReviews.reviews(bad[0])).To(Equal(1))
	// A known caller from that address is not limited by it; another
	// address has its own budget.
	g.Expect(good.do("GET", "/api/v1/links", nil).status).To(Equal(http.StatusOK))
	other := &apiClient{t: t, base: limitedURL, token: w.editor.token, forwardedFor: uniqueAddress()}
	g.Expect(other.do("GET", "/api/v1/links", nil).status).To(Equal(http.StatusOK))

	// More refused tokens than the cache of refusals holds, from addresses
	// that each stay within the limit.
	type attempt struct{ token, address string }
	const flood = rejectedCacheSize + rejectedCacheSize/5
	attempts := make(chan attempt)
	statuses := make(chan int, flood)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for a := range attempts {
				statuses <- rawGet(limitedURL+"/api/v1/links", a.token, a.address)
			}
		})
	}
	flooded := make([]string, flood)
	var address string
	for i := range flooded {
		if i%testUnauthenticatedLimit == 0 {
			address = uniqueAddress()
		}
		flooded[i] = fakeJWT()
		attempts <- attempt{flooded[i], address}
	}
	close(attempts)
	wg.Wait()
	close(statuses)
	for s := range statuses {
		g.Expect(s).To(Equal(http.StatusUnauthorized))
	}
	for _, tok := range flooded {
		g.Expect(tokenReviews.reviews(tok)).To(Equal(1))
	}
	g.Expect(good.do("GET", "/api/v1/links", nil).status).To(Equal(http.StatusOK))
	g.Expect(tokenReviews.reviews(good.token)).To(Equal(1), "the good caller's answer was not pushed out")
}

// TestRateLimitPerServiceAccount: the limit counts requests of the
// ServiceAccount, whichever of its tokens they carry.
func TestRateLimitPerServiceAccount(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)
	address := uniqueAddress()
	first := &apiClient{t: t, base: limitedURL, token: w.viewer.token, forwardedFor: address}
	for i := range testRateLimit {
		r := first.do("GET", "/api/v1/links", nil)
		g.Expect(r.status).To(Equal(http.StatusOK), "request %d: %s", i+1, r)
	}
	second := &apiClient{t: t, base: limitedURL, token: mintToken(t, w.ns, "viewer", DefaultTokenAudience), forwardedFor: address}
	r := second.do("GET", "/api/v1/links", nil)
	g.Expect(r.status).To(Equal(http.StatusTooManyRequests), "%s", r)
	g.Expect(r.header.Get("X-RateLimit-Remaining")).To(Equal("0"))
	g.Expect(tokenReviews.reviews(second.token)).To(Equal(1), "the second token is good, only out of budget")
}

// rawGet sends a GET with token from address (X-Forwarded-For) and returns
// the status, or 0 when the request failed; safe off the test goroutine.
func rawGet(url, token, address string) int {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if address != "" {
		req.Header.Set("X-Forwarded-For", address)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// fakeJWT returns a new token with a JWT's shape that no one issued.
func fakeJWT() string {
	seg := func(n int) string {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return seg(24) + "." + seg(96) + "." + seg(64)
}

func TestAPIFlags(t *testing.T) {
	g := NewWithT(t)
	parse := func(args ...string) (Options, error) {
		o := DefaultOptions()
		err := optionstest.Parse(&o, args...)
		return o, err
	}
	o, err := parse()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(o.TokenAudiences).To(Equal([]string{"kurz"}))
	g.Expect(o.TrustedProxies).To(BeEmpty())

	o, err = parse("--api-token-audiences=a, b", "--api-token-audiences=c", "--api-trusted-proxies=10.0.0.0/8, 192.0.2.1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(o.TokenAudiences).To(Equal([]string{"a", "b", "c"}))
	g.Expect(o.TrustedProxies).To(Equal([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.1/32")}))
	g.Expect(o.Validate()).To(Succeed())

	_, err = parse("--api-trusted-proxies=10.0.0.0/8,proxy")
	g.Expect(err).To(MatchError(ContainSubstring(`"proxy" is not a CIDR`)))
	_, err = parse("--api-token-audiences=a,,b")
	g.Expect(err).To(MatchError(ContainSubstring("empty audience")))

	o = DefaultOptions()
	o.TokenAudiences = nil
	g.Expect(o.Validate()).To(MatchError(ContainSubstring("at least one audience")))
	o = DefaultOptions()
	o.UnauthenticatedRateLimit = -1
	g.Expect(o.Validate()).To(HaveOccurred())
}

// TestClientKey: the client of the unauthenticated limit is the TCP peer,
// unless that is a trusted proxy; X-Forwarded-For from anyone else is a
// claim and ignored.
func TestClientKey(t *testing.T) {
	g := NewWithT(t)
	req := func(remote string, xff ...string) *http.Request {
		r := httptest.NewRequest("GET", "/api/v1/links", nil)
		r.RemoteAddr = remote
		for _, v := range xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		return r
	}
	direct := &server{}
	g.Expect(direct.clientKey(req("192.0.2.7:1234", "203.0.113.9"))).To(Equal("192.0.2.7/32"))
	g.Expect(direct.clientKey(req("[2001:db8::1]:443"))).To(Equal("2001:db8::/64"))

	proxied := &server{opts: Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}}
	g.Expect(proxied.clientKey(req("10.1.2.3:80", "198.51.100.1, 203.0.113.9", "10.9.9.9"))).To(Equal("203.0.113.9/32"))
	g.Expect(proxied.clientKey(req("192.0.2.7:1234", "203.0.113.9"))).To(Equal("192.0.2.7/32"))
}

// TestAuthReviewsCounted: kurz_api_auth_reviews_total counts the reviews a
// request waited on: a new token costs one TokenReview and one
// SubjectAccessReview, its next request (cached) none.
func TestAuthReviewsCounted(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)
	token := mintToken(t, w.ns, "viewer", DefaultTokenAudience)
	count := func() (token, access float64) {
		return testutil.ToFloat64(authReviews.WithLabelValues("token", "ok")), testutil.ToFloat64(authReviews.WithLabelValues("access", "ok"))
	}
	tokens, accesses := count()
	for range 2 {
		req, _ := http.NewRequest("GET", baseURL+"/api/v1/links", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	}
	gotTokens, gotAccesses := count()
	g.Expect(gotTokens - tokens).To(Equal(1.0))
	g.Expect(gotAccesses - accesses).To(Equal(1.0))
}
