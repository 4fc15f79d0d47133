package restapi

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
	"golang.org/x/crypto/bcrypt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/parallel"
)

// The finding tests build a workspace the way kubectl users and the
// controllers would leave it (duplicate keys, links on hostnames the
// workspace does not hold, expired links, clicks, Ready reasons, links the
// controller has not reached yet), then compare the API's pages with an
// answer computed by brute force from the Links in kube-apiserver.

var (
	findTags  = []string{"sale", "2026", "Docs", "team:web", "q1", "q2"}
	findStems = []string{"docs", "Docs", "campaign", "campaign-2026-", "go", "a_"}
)

// testPasswordHash is a valid bcrypt hash (the CRD checks the shape).
var testPasswordHash = func() string {
	h, err := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	if err != nil {
		panic(err)
	}
	return string(h)
}()

// randomLinks creates n Links in ns through kube-apiserver, with random
// fields drawn from small sets (so sorts meet ties and filters match), and
// writes their status as the controller and the click flush would.
func randomLinks(t *testing.T, rng *rand.Rand, ns string, hosts []string, n int) {
	t.Helper()
	ctx := context.Background()
	type plan struct {
		link   *kurzv1alpha1.Link
		status kurzv1alpha1.LinkStatus
	}
	now := time.Now().UTC()
	plans := make([]plan, n)
	for i := range plans {
		key := findStems[rng.IntN(len(findStems))]
		if rng.IntN(5) > 0 {
			key += strconv.Itoa(rng.IntN(30))
		}
		l := &kurzv1alpha1.Link{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("l%04d", i)},
			Spec: kurzv1alpha1.LinkSpec{
				Domain: kurzv1alpha1.Hostname(hosts[rng.IntN(len(hosts))]),
				Key:    key,
				URL:    kurzv1alpha1.URL(fmt.Sprintf("https://Shop.Example.com/%s/%d?Ref=News", []string{"Docs", "sale", "x"}[rng.IntN(3)], rng.IntN(50))),
			},
		}
		for _, tag := range findTags {
			if rng.IntN(4) == 0 {
				l.Spec.Tags = append(l.Spec.Tags, tag)
			}
		}
		if rng.IntN(4) == 0 {
			h := testPasswordHash
			l.Spec.PasswordHash = &h
		}
		if rng.IntN(4) == 0 {
			e := metav1.NewTime(now.Add(time.Duration(rng.IntN(20)-10) * time.Hour).Truncate(time.Second))
			l.Spec.ExpiresAt = &e
		}
		var st kurzv1alpha1.LinkStatus
		st.Clicks = int64(rng.IntN(4))
		if st.Clicks > 0 {
			lc := metav1.NewTime(now.Add(-time.Duration(rng.IntN(30)) * time.Minute).Truncate(time.Second))
			st.LastClickTime = &lc
		}
		if rng.IntN(2) == 0 {
			c := metav1.NewMicroTime(now.Add(-time.Duration(rng.IntN(3_600_000_000)) * time.Microsecond))
			st.CreatedAt, st.UpdatedAt = &c, &c
			if rng.IntN(2) == 0 {
				u := metav1.NewMicroTime(c.Add(time.Duration(rng.IntN(600)) * time.Second))
				st.UpdatedAt = &u
			}
		}
		if reason := []string{"", kurzv1alpha1.ReasonActive, kurzv1alpha1.ReasonExpired, kurzv1alpha1.ReasonKeyConflict, kurzv1alpha1.ReasonDomainNotFound}[rng.IntN(5)]; reason != "" {
			st.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
				Reason: reason, Message: "set by the test", LastTransitionTime: metav1.NewTime(now.Truncate(time.Second))}}
		}
		plans[i] = plan{link: l, status: st}
	}
	err := parallel.Each(ctx, 0, n, 8, func(i int) error {
		p := plans[i]
		if err := k8s.Create(ctx, p.link); err != nil {
			return err
		}
		orig := p.link.DeepCopy()
		p.link.Status = p.status
		return k8s.Status().Patch(ctx, p.link, client.MergeFrom(orig))
	})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
}

// waitForTotal waits until the API lists total links in c's workspace.
func waitForTotal(t *testing.T, c *apiClient, total int) {
	t.Helper()
	NewWithT(t).Eventually(func() any {
		return c.do("GET", "/api/v1/links", nil).body["meta"]
	}, "60s", "200ms").Should(HaveKeyWithValue("total", BeNumerically("==", total)))
}

// refLink is what the brute-force answer knows of a link.
type refLink struct {
	id, key, url, domain string
	tags                 []string
	state                string
	created, updated     time.Time
	clicks, lastClick    int64
	password             bool
}

var refStates = map[string]string{
	kurzv1alpha1.ReasonActive: "active", kurzv1alpha1.ReasonExpired: "expired",
	kurzv1alpha1.ReasonKeyConflict: "conflict", kurzv1alpha1.ReasonDomainNotFound: "no_domain",
}

// liveLinks reads ns's Links from kube-apiserver.
func liveLinks(t *testing.T, ns string) []refLink {
	t.Helper()
	var list kurzv1alpha1.LinkList
	NewWithT(t).Expect(k8s.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	out := make([]refLink, len(list.Items))
	for i := range list.Items {
		l := &list.Items[i]
		r := refLink{
			id: string(l.UID), key: l.Spec.Key, url: string(l.Spec.URL), domain: string(l.Spec.Domain), tags: l.Spec.Tags,
			created: l.CreationTimestamp.Time, updated: l.CreationTimestamp.Time, clicks: l.Status.Clicks,
			password: l.Spec.PasswordHash != nil,
		}
		// Until the controller's first write (this suite runs none), the
		// API's creation time is in the annotation.
		if a, ok := l.Annotations[kurzv1alpha1.LinkCreatedAtAnnotation]; ok {
			at, err := time.Parse(time.RFC3339Nano, a)
			NewWithT(t).Expect(err).NotTo(HaveOccurred())
			r.created, r.updated = at, at
		}
		if l.Status.CreatedAt != nil {
			r.created = l.Status.CreatedAt.Time
		}
		if l.Status.UpdatedAt != nil {
			r.updated = l.Status.UpdatedAt.Time
		}
		if l.Status.LastClickTime != nil {
			r.lastClick = l.Status.LastClickTime.Unix()
		}
		for _, c := range l.Status.Conditions {
			if c.Type == kurzv1alpha1.ConditionReady {
				r.state = refStates[c.Reason]
			}
		}
		out[i] = r
	}
	return out
}

// refQuery is a list query as parameters, and as the brute force reads it.
type refQuery struct {
	params                url.Values
	search                string
	domains, tags, noTags []string
	allTags               bool
	states                []string
	after, before, dead   time.Time
	password              *bool
	sort                  string
}

func randomQuery(rng *rand.Rand, links []refLink, hosts []string) refQuery {
	q := refQuery{params: url.Values{}}
	some := func(from []string) []string {
		var out []string
		for range 1 + rng.IntN(2) {
			out = append(out, from[rng.IntN(len(from))])
		}
		return out
	}
	someTime := func() time.Time { return links[rng.IntN(len(links))].created }
	if rng.IntN(3) == 0 {
		q.search = []string{"DOCS", "camp", "ref=news", "2026-", "zzzz", "sale", strings.ToUpper(hosts[0][:4])}[rng.IntN(7)]
		q.params.Set("search", q.search)
	}
	if rng.IntN(4) == 0 {
		q.domains = some(hosts)
		for _, d := range q.domains {
			// Hostnames are normalized as a body's are.
			q.params.Add("domain", strings.ToUpper(d)+".")
		}
	}
	if rng.IntN(3) == 0 {
		q.tags = some(append(findTags, "none"))
		q.params["tag"] = q.tags
		if rng.IntN(2) == 0 {
			q.allTags = true
			q.params.Set("tag_mode", "all")
		}
	}
	if rng.IntN(4) == 0 {
		q.noTags = some(findTags)
		q.params["exclude_tag"] = q.noTags
	}
	if rng.IntN(4) == 0 {
		q.states = some([]string{"active", "expired", "conflict", "no_domain"})
		q.params["state"] = q.states
	}
	if rng.IntN(5) == 0 {
		q.after = someTime()
		q.params.Set("created_after", q.after.Format(time.RFC3339Nano))
	}
	if rng.IntN(5) == 0 {
		q.before = someTime()
		q.params.Set("created_before", q.before.Format(time.RFC3339Nano))
	}
	if rng.IntN(5) == 0 {
		q.dead = time.Now().Add(-time.Duration(rng.IntN(30)) * time.Minute).Truncate(time.Second)
		q.params.Set("last_click_before", strconv.FormatInt(q.dead.Unix(), 10))
	}
	if rng.IntN(5) == 0 {
		b := rng.IntN(2) == 0
		q.password = &b
		q.params.Set("has_password", strconv.FormatBool(b))
	}
	if rng.IntN(4) > 0 {
		fields := []string{"created_at", "updated_at", "key", "clicks", "last_click"}
		q.sort = fields[rng.IntN(len(fields))]
		if rng.IntN(2) == 0 {
			q.sort = "-" + q.sort
		}
		q.params.Set("sort", q.sort)
	}
	return q
}

func (q *refQuery) match(l refLink) bool {
	has := func(t string) bool { return slices.Contains(l.tags, t) }
	switch {
	case q.search != "" && !strings.Contains(strings.ToLower(l.key+"\x00"+l.url+"\x00"+l.domain), strings.ToLower(q.search)):
	case len(q.domains) > 0 && !slices.Contains(q.domains, l.domain):
	case len(q.tags) > 0 && q.allTags && !allOf(q.tags, has):
	case len(q.tags) > 0 && !q.allTags && !slices.ContainsFunc(q.tags, has):
	case slices.ContainsFunc(q.noTags, has):
	case len(q.states) > 0 && !slices.Contains(q.states, l.state):
	case !q.after.IsZero() && !l.created.After(q.after):
	case !q.before.IsZero() && !l.created.Before(q.before):
	case !q.dead.IsZero() && l.lastClick != 0 && l.lastClick >= q.dead.Unix():
	case q.password != nil && *q.password != l.password:
	default:
		return true
	}
	return false
}

func allOf(xs []string, f func(string) bool) bool {
	for _, x := range xs {
		if !f(x) {
			return false
		}
	}
	return true
}

// compare orders two links as sort says: times and counts newest or most
// first, keys A to Z, '-' reversing; ties by id in the same direction.
func (q *refQuery) compare(a, b refLink) int {
	field, reverse := strings.CutPrefix(q.sort, "-")
	var c int
	switch field {
	case "", "created_at":
		c = -a.created.Compare(b.created)
	case "updated_at":
		c = -a.updated.Compare(b.updated)
	case "key":
		c = strings.Compare(a.key, b.key)
	case "clicks":
		c = -cmp.Compare(a.clicks, b.clicks)
	case "last_click":
		c = -cmp.Compare(a.lastClick, b.lastClick)
	}
	if c == 0 {
		c = strings.Compare(a.id, b.id)
		if field != "key" {
			c = -c
		}
	}
	if reverse {
		c = -c
	}
	return c
}

// want is the brute-force answer: the ids of every matching link, in order.
func (q *refQuery) want(links []refLink) []string {
	var kept []refLink
	for _, l := range links {
		if q.match(l) {
			kept = append(kept, l)
		}
	}
	slices.SortFunc(kept, q.compare)
	ids := make([]string, len(kept))
	for i, l := range kept {
		ids[i] = l.id
	}
	return ids
}

// listPage gets one page of a list with params and checks its envelope:
// the page URLs carry the params, meta.path is the bare endpoint.
func listPage(t *testing.T, c *apiClient, path string, params url.Values, page int) (ids []string, total int) {
	t.Helper()
	g := NewWithT(t)
	p := url.Values{}
	for k, v := range params {
		p[k] = v
	}
	p.Set("page", strconv.Itoa(page))
	r := c.do("GET", path+"?"+p.Encode(), nil)
	g.Expect(r.status).To(Equal(http.StatusOK), "%s?%s: %s", path, p.Encode(), r)
	meta := r.body["meta"].(map[string]any)
	g.Expect(meta["path"]).To(Equal(baseURL + path))
	total = int(meta["total"].(float64))
	last := max(1, (total+24)/25)
	g.Expect(meta["last_page"]).To(BeNumerically("==", last))
	first := r.body["links"].(map[string]any)["first"].(string)
	u, err := url.Parse(first)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(u.Query().Get("page")).To(Equal("1"))
	for k, v := range params {
		if !slices.Contains([]string{"page", "colour"}, k) {
			g.Expect(u.Query()[k]).To(Equal(v), "first page URL %s carries %s", first, k)
		}
	}
	for _, item := range r.body["data"].([]any) {
		ids = append(ids, item.(map[string]any)["id"].(string))
	}
	return ids, total
}

// TestLinkFiltersAgainstBruteForce: random filters and sorts on a random
// workspace, each compared with the brute-force answer on its first page,
// its last page and a random page.
func TestLinkFiltersAgainstBruteForce(t *testing.T) {
	testenv.Need(t)
	rng := rand.New(rand.NewPCG(26, 1))
	w, host := newWorkspaceWithDomain(t)
	host2 := uniqueHost()
	w.createDomain(t, host2)
	hosts := []string{host, host2, "no-domain-" + uniqueHost()}
	randomLinks(t, rng, w.ns, hosts, 300)
	// A foreign workspace's links, with the same tags and keys, never show.
	foreign, fhost := newWorkspaceWithDomain(t)
	randomLinks(t, rng, foreign.ns, []string{fhost, host}, 40)
	waitForTotal(t, w.viewer, 300)
	links := liveLinks(t, w.ns)

	for i := range 70 {
		q := randomQuery(rng, links, hosts)
		want := q.want(links)
		last := max(1, (len(want)+24)/25)
		for _, page := range []int{1, last, 1 + rng.IntN(last+1)} {
			ids, total := listPage(t, w.viewer, "/api/v1/links", q.params, page)
			from, to := min((page-1)*25, len(want)), min(page*25, len(want))
			if total != len(want) || !slices.Equal(ids, want[from:to]) {
				t.Fatalf("query %d (%s), page %d: got %d %v\nwant %d %v", i, q.params.Encode(), page, total, ids, len(want), want[from:to])
			}
		}
	}
}

// TestLinkPagesCoverEveryMatch pages through sorted, filtered lists: every
// matching link exactly once; then pages again while links are created and
// deleted, and every page is still a well-formed answer.
func TestLinkPagesCoverEveryMatch(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	rng := rand.New(rand.NewPCG(26, 2))
	w, host := newWorkspaceWithDomain(t)
	randomLinks(t, rng, w.ns, []string{host}, 120)
	waitForTotal(t, w.viewer, 120)
	links := liveLinks(t, w.ns)
	for _, params := range []url.Values{
		{"sort": {"clicks"}},
		{"sort": {"-key"}, "exclude_tag": {"q1"}},
		{"sort": {"last_click"}, "tag": {"sale", "Docs"}},
		{"search": {"camp"}, "sort": {"-updated_at"}},
	} {
		q := refQuery{params: params, sort: params.Get("sort"), search: params.Get("search"), tags: params["tag"], noTags: params["exclude_tag"]}
		var got []string
		for page := 1; ; page++ {
			ids, _ := listPage(t, w.viewer, "/api/v1/links", params, page)
			if len(ids) == 0 {
				break
			}
			got = append(got, ids...)
		}
		g.Expect(got).To(Equal(q.want(links)), "%s", params.Encode())
	}

	// Pages are offsets: with links created and deleted meanwhile a page
	// may repeat or miss a link, but every answer is a well-formed page.
	stop := make(chan struct{})
	var churn sync.WaitGroup
	churn.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			r := w.editor.do("POST", "/api/v1/links", map[string]any{"key": fmt.Sprintf("churn%d", i), "domain": host, "url": "https://example.com/", "tags": []string{"sale"}})
			if r.status != http.StatusCreated {
				t.Errorf("churn create: %s", r)
				return
			}
			if r := w.editor.do("DELETE", "/api/v1/links/"+links[i%len(links)].id, nil); r.status != http.StatusOK && r.status != http.StatusNotFound {
				t.Errorf("churn delete: %s", r)
				return
			}
		}
	})
	for round := range 3 {
		for page := 1; page <= 6; page++ {
			ids, total := listPage(t, w.viewer, "/api/v1/links", url.Values{"sort": {"key"}, "tag": {"sale"}}, page)
			g.Expect(len(ids)).To(BeNumerically("<=", 25), "round %d page %d", round, page)
			g.Expect(len(ids)).To(Equal(max(0, min(25, total-(page-1)*25))), "a page holds what its offset and the total say")
		}
	}
	close(stop)
	churn.Wait()
}

// TestListParameters: bad values of known parameters are 422s naming them;
// unknown parameters are ignored, empty values count as absent, page
// behaves as before.
func TestListParameters(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)
	for i := range 3 {
		w.createLink(t, map[string]any{"key": fmt.Sprintf("p%d", i), "domain": host, "url": "https://example.com/", "tags": []string{"t"}})
	}
	for _, c := range []struct {
		path, field, msg string
	}{
		{"/api/v1/links?search=" + strings.Repeat("a", 256), "search", "The search field must not be greater than 255 characters."},
		{"/api/v1/links?search=a&search=b", "search", "The search field must be a single value."},
		{"/api/v1/links?domain=not+a+host", "domain", "The domain field must be a valid domain name."},
		{"/api/v1/links?tag=" + strings.Repeat("t", 65), "tag", "The tag field must not be greater than 64 characters."},
		{"/api/v1/links?exclude_tag=" + strings.Repeat("t", 65), "exclude_tag", "The exclude tag field must not be greater than 64 characters."},
		{"/api/v1/links?tag_mode=some", "tag_mode", "The selected tag mode is invalid."},
		{"/api/v1/links?state=active&state=dead", "state", "The selected state is invalid."},
		{"/api/v1/links?created_after=yesterday", "created_after", "The created after field must be a valid date."},
		{"/api/v1/links?created_before=2026-13-01", "created_before", "The created before field must be a valid date."},
		{"/api/v1/links?last_click_before=soon", "last_click_before", "The last click before field must be a valid date."},
		{"/api/v1/links?has_password=maybe", "has_password", "The has password field must be true or false."},
		{"/api/v1/links?sort=name", "sort", "The selected sort is invalid."},
		{"/api/v1/links?sort=--key", "sort", "The selected sort is invalid."},
		{"/api/v1/domains?status=verified", "status", "The selected status is invalid."},
		{"/api/v1/domains?sort=key", "sort", "The selected sort is invalid."},
		{"/api/v1/tags?sort=links", "sort", "The selected sort is invalid."},
	} {
		r := w.viewer.do("GET", c.path, nil)
		expectFieldError(g, r, c.field, c.msg)
	}
	plain := w.viewer.do("GET", "/api/v1/links", nil)
	for _, path := range []string{"/api/v1/links?colour=red", "/api/v1/links?search=&tag=&sort=", "/api/v1/links?page=abc&colour=red"} {
		r := w.viewer.do("GET", path, nil)
		g.Expect(r.status).To(Equal(http.StatusOK), path)
		g.Expect(r.body).To(Equal(plain.body), "%s lists like the plain list, with plain page URLs", path)
	}
	r := w.viewer.do("GET", "/api/v1/links?tag=t&page=0", nil)
	g.Expect(r.body["meta"]).To(HaveKeyWithValue("current_page", BeNumerically("==", 1)))
	g.Expect(r.body["links"]).To(HaveKeyWithValue("first", baseURL+"/api/v1/links?tag=t&page=1"))
	// Dates: RFC 3339, the short forms, unix seconds.
	for _, d := range []string{"2020-01-02T03:04:05Z", "2020-01-02", "2020-01-02 03:04", "1577934245"} {
		r := w.viewer.do("GET", "/api/v1/links?created_after="+url.QueryEscape(d), nil)
		g.Expect(r.body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 3)), d)
	}
}

// TestDomainFilters: search, status and sort on the domain list.
func TestDomainFilters(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)
	suffix := uniqueHost()
	names := []string{"beta-" + suffix, "alpha-" + suffix, "gamma-" + suffix}
	ids := map[string]string{}
	for _, n := range names {
		ids[n] = w.createDomain(t, n)
	}
	// gamma is proven, as the controller would record it.
	var gamma kurzv1alpha1.Domain
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: names[2]}, &gamma)).To(Succeed())
	markDomainActive(t, &gamma)
	g.Eventually(func() any {
		return w.viewer.do("GET", "/api/v1/domains?status=active", nil).body["meta"]
	}, "20s").Should(HaveKeyWithValue("total", BeNumerically("==", 1)))

	domainsOf := func(path string) []string {
		r := w.viewer.do("GET", path, nil)
		g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
		var out []string
		for _, d := range r.body["data"].([]any) {
			out = append(out, d.(map[string]any)["domain"].(string))
		}
		return out
	}
	g.Expect(domainsOf("/api/v1/domains?sort=domain")).To(Equal([]string{names[1], names[0], names[2]}))
	g.Expect(domainsOf("/api/v1/domains?sort=-domain")).To(Equal([]string{names[2], names[0], names[1]}))
	g.Expect(domainsOf("/api/v1/domains?sort=-created_at")).To(Equal(names), "oldest first")
	g.Expect(domainsOf("/api/v1/domains")).To(Equal([]string{names[2], names[1], names[0]}), "newest first")
	g.Expect(domainsOf("/api/v1/domains?search=ALPHA")).To(Equal([]string{names[1]}))
	g.Expect(domainsOf("/api/v1/domains?status=active")).To(Equal([]string{names[2]}))
	g.Expect(domainsOf("/api/v1/domains?status=pending&sort=domain")).To(Equal([]string{names[1], names[0]}))
	r := w.viewer.do("GET", "/api/v1/domains?status=pending&page=1", nil)
	g.Expect(r.body["links"]).To(HaveKeyWithValue("next", BeNil()))
	g.Expect(r.body["links"]).To(HaveKeyWithValue("first", baseURL+"/api/v1/domains?status=pending&page=1"))
}

// markDomainActive writes what the Domain controller writes for a proven
// hostname (the controller is not running here).
func markDomainActive(t *testing.T, d *kurzv1alpha1.Domain) {
	t.Helper()
	d.Status.Phase = kurzv1alpha1.DomainActive
	d.Status.Claim = &kurzv1alpha1.DomainClaim{Hostname: string(d.Spec.Domain), Since: metav1.NowMicro()}
	d.Status.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: kurzv1alpha1.ReasonVerified, Message: "test", ObservedGeneration: d.Generation, LastTransitionTime: metav1.Now()}}
	NewWithT(t).Expect(k8s.Status().Update(context.Background(), d)).To(Succeed())
}
