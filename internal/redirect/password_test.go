package redirect

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	"golang.org/x/crypto/bcrypt"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/redirect/bcryptproc"
	"github.com/kurz-dev/kurz/internal/redirect/clicks"
	"github.com/kurz-dev/kurz/internal/testenv"
)

func postPassword(t *testing.T, base, host, path, password string, hdr map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest("POST", base+path, strings.NewReader(url.Values{"password": {password}}.Encode()))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	req.Host = host
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return send(t, req)
}

func bcryptHash(t *testing.T, pw string) string {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return string(h)
}

// withPassword is a Link spec change that protects it with password.
func withPassword(t *testing.T, password string) func(*kurzv1alpha1.LinkSpec) {
	return func(s *kurzv1alpha1.LinkSpec) { s.PasswordHash = ptr(bcryptHash(t, password)) }
}

func TestPassword(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createDomain(t, ns, "d", "pw.test", nil)
	l := createLink(t, ns, "l", "pw.test", "secret", "https://dest.example/p", withPassword(t, "right horse"))
	ts := startServer(t, testOptions())

	// The form: no click, a phone-friendly page without external assets.
	var form answer
	g.Eventually(func() int { form = do(t, "GET", ts.base, "pw.test", "/secret", nil); return form.status }, 30*time.Second).
		Should(Equal(http.StatusOK))
	g.Expect(form.header.Get("Content-Type")).To(HavePrefix("text/html"))
	g.Expect(form.header.Get("Cache-Control")).To(ContainSubstring("no-store"))
	g.Expect(form.body).To(ContainSubstring(`<meta name="viewport"`))
	g.Expect(form.body).To(ContainSubstring(`<form method="post">`))
	g.Expect(form.body).NotTo(MatchRegexp(`(src|href)=`))
	g.Expect(do(t, "HEAD", ts.base, "pw.test", "/secret", nil).status).To(Equal(http.StatusOK))

	// Wrong, then right.
	wrong := postPassword(t, ts.base, "pw.test", "/secret", "wrong", nil)
	g.Expect(wrong.status).To(Equal(http.StatusForbidden))
	g.Expect(wrong.body).To(ContainSubstring("Wrong password"))
	right := postPassword(t, ts.base, "pw.test", "/secret?ref=qr", "right horse", map[string]string{"X-Forwarded-Proto": "https"})
	g.Expect(right.status).To(Equal(http.StatusSeeOther))
	g.Expect(right.location).To(Equal("https://dest.example/p?ref=qr"))
	cookie := right.header.Get("Set-Cookie")
	g.Expect(cookie).To(HavePrefix(passwordCookie + "="))
	for _, attr := range []string{"path=/secret", "HttpOnly", "SameSite=Lax", "secure", "max-age="} {
		g.Expect(strings.ToLower(cookie)).To(ContainSubstring(strings.ToLower(attr)))
	}
	plainCookie := postPassword(t, ts.base, "pw.test", "/secret", "right horse", nil).header.Get("Set-Cookie")
	g.Expect(strings.ToLower(plainCookie)).NotTo(ContainSubstring("secure"))

	// The cookie lets the visitor through; a tampered one does not.
	value := strings.SplitN(strings.SplitN(cookie, ";", 2)[0], "=", 2)[1]
	withCookie := func(v string) answer {
		return do(t, "GET", ts.base, "pw.test", "/secret", map[string]string{"Cookie": passwordCookie + "=" + v})
	}
	a := withCookie(value)
	g.Expect(a.status).To(Equal(http.StatusFound))
	g.Expect(a.location).To(Equal("https://dest.example/p"))
	g.Expect(withCookie(value + "x").status).To(Equal(http.StatusOK))
	exp, mac, _ := strings.Cut(value, ".")
	later, _ := strconv.ParseInt(exp, 10, 64)
	g.Expect(withCookie(strconv.FormatInt(later+3600, 10) + "." + mac).status).To(Equal(http.StatusOK))

	// Three clicks: two right passwords and the cookie; forms and the HEAD count none.
	g.Eventually(func() int64 { return clicksOf(t, ns, "l") }, 30*time.Second).Should(Equal(int64(3)))

	// A new password invalidates the cookie.
	g.Expect(k8s.Get(ctx, keyOf(ns, "l"), l)).To(Succeed())
	l.Spec.PasswordHash = ptr(bcryptHash(t, "new horse"))
	g.Expect(k8s.Update(ctx, l)).To(Succeed())
	g.Eventually(func() int { return withCookie(value).status }, 10*time.Second).Should(Equal(http.StatusOK))

	// Attempts are limited per client and link: a burst, then 429 (even for
	// the right password) with Retry-After. Every POST takes an attempt, right
	// or wrong: three above.
	for tries := 3; tries < attemptBurst; tries++ {
		g.Expect(postPassword(t, ts.base, "pw.test", "/secret", "wrong", nil).status).To(Equal(http.StatusForbidden))
	}
	g.Expect(postPassword(t, ts.base, "pw.test", "/secret", "wrong", nil).status).To(Equal(http.StatusTooManyRequests))
	limited := postPassword(t, ts.base, "pw.test", "/secret", "new horse", nil)
	g.Expect(limited.status).To(Equal(http.StatusTooManyRequests))
	retry, err := strconv.Atoi(limited.header.Get("Retry-After"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(retry).To(BeNumerically(">=", 1))

	// The POST body is bounded.
	big := postPassword(t, ts.base, "pw.test", "/secret", strings.Repeat("x", 16<<10), nil)
	g.Expect(big.status).To(Equal(http.StatusRequestEntityTooLarge))
}

// TestCostlyHashRefused: a hash above maxBcryptCost is refused without being
// compared (a $2a$31$ hash would take days of CPU per attempt), even with the
// right password, and the link is logged once, without its hash.
func TestCostlyHashRefused(t *testing.T) {
	g := NewWithT(t)
	costly, err := bcrypt.GenerateFromPassword([]byte("right horse"), maxBcryptCost+1)
	g.Expect(err).NotTo(HaveOccurred())
	cheap := bcryptHash(t, "right horse")
	var logged []string
	p := newPasswords([]byte("k"), 1)
	p.log = funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})

	entry := func(uid, hash string) *Entry {
		return &Entry{slot: clicks.NewQueue().NewSlot(types.UID(uid)), entryRare: &entryRare{passwordHash: hash}, rec: &linkRec{objRef: objRef{namespace: "ns", name: uid}}}
	}
	g.Expect(p.matches(entry("ok", cheap), []byte("right horse"))).To(BeTrue())
	g.Expect(p.matches(entry("ok", cheap), []byte("wrong"))).To(BeFalse())
	g.Expect(logged).To(BeEmpty())

	// Right password, costly hash: refused (comparing would have said yes).
	g.Expect(p.matches(entry("costly", string(costly)), []byte("right horse"))).To(BeFalse())
	// The cost field is all that is read: a $31$ hash answers at once.
	cost31 := cheap[:4] + "31" + cheap[6:]
	for range 3 {
		g.Expect(p.matches(entry("cost31", cost31), []byte("right horse"))).To(BeFalse())
	}
	g.Expect(logged).To(HaveLen(2), "once per link")
	g.Expect(logged[0]).To(ContainSubstring(`"cost"=13`))
	g.Expect(logged[1]).To(ContainSubstring(`"cost"=31`))
	for _, l := range logged {
		g.Expect(l).To(ContainSubstring("too costly"))
		g.Expect(l).NotTo(ContainSubstring(string(costly)[7:]))
		g.Expect(l).NotTo(ContainSubstring(cost31[7:]))
	}
}

// TestPasswordWorkerFails: when the bcrypt worker process cannot run, the
// comparison is made in this process, with the same answers, and logged at
// most once a minute.
func TestPasswordWorkerFails(t *testing.T) {
	g := NewWithT(t)
	var logged []string
	p := newPasswords([]byte("k"), 1)
	p.bcrypt = bcryptproc.New(1, filepath.Join(t.TempDir(), "no-such-binary"))
	p.log = funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	e := &Entry{slot: clicks.NewQueue().NewSlot("u"), entryRare: &entryRare{passwordHash: bcryptHash(t, "right horse")}, rec: &linkRec{objRef: objRef{namespace: "ns", name: "l"}}}
	for range 3 {
		g.Expect(p.matches(e, []byte("right horse"))).To(BeTrue())
		g.Expect(p.matches(e, []byte("wrong"))).To(BeFalse())
	}
	g.Expect(p.bcrypt.Pid()).To(BeZero())
	g.Expect(logged).To(HaveLen(1))
	g.Expect(logged[0]).To(ContainSubstring("bcrypt worker process failed"))
	g.Expect(logged[0]).To(ContainSubstring("no-such-binary"))
}

// TestPasswordAttemptsConcurrent: attempts sent at once cannot outrun the
// limit while the slow bcrypt checks run; the excess over the burst gets 429.
func TestPasswordAttemptsConcurrent(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	createDomain(t, ns, "d", "pwrace.test", nil)
	// The default cost: each check takes long enough for requests to overlap.
	hash, err := bcrypt.GenerateFromPassword([]byte("right horse"), bcrypt.DefaultCost)
	g.Expect(err).NotTo(HaveOccurred())
	createLink(t, ns, "l", "pwrace.test", "k", "https://dest.example/", func(s *kurzv1alpha1.LinkSpec) {
		s.PasswordHash = ptr(string(hash))
	})
	o := testOptions()
	// Every attempt the limit lets through gets a check slot at once: this
	// test is about the attempt count, not the slots.
	o.PasswordConcurrency = attemptBurst
	ts := startServer(t, o)
	g.Eventually(func() int { return do(t, "GET", ts.base, "pwrace.test", "/k", nil).status }, 30*time.Second).
		Should(Equal(http.StatusOK))

	const n = 4 * attemptBurst
	statuses := make(chan int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			<-start
			statuses <- postPassword(t, ts.base, "pwrace.test", "/k", "wrong", nil).status
		})
	}
	close(start)
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	g.Expect(count).To(Equal(map[int]int{
		http.StatusForbidden:       attemptBurst,
		http.StatusTooManyRequests: n - attemptBurst,
	}))
}
