package bulk_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/importer"
	"github.com/kurz-dev/kurz/internal/importer/bulk"
	"github.com/kurz-dev/kurz/internal/importer/bulk/bulktest"
)

// links makes n valid links on go.example.com, keys k0...
func links(n int) []importer.Link {
	out := make([]importer.Link, n)
	for i := range out {
		out[i] = importer.Link{At: fmt.Sprintf("line %d", i+2), Domain: "go.example.com", Key: fmt.Sprintf("k%d", i), URL: fmt.Sprintf("https://example.com/%d", i)}
	}
	return out
}

// options point at the server with its token in a file.
func options(t *testing.T, s *bulktest.Server) bulk.Options {
	t.Helper()
	token := filepath.Join(t.TempDir(), "token")
	NewWithT(t).Expect(os.WriteFile(token, []byte(s.Token+"\n"), 0o600)).To(Succeed())
	o := bulk.DefaultOptions()
	o.API, o.TokenFile = s.URL, token
	o.ProgressInterval = 50 * time.Millisecond
	return o
}

// TestImportTwice: batches of at most 100 with the token, a 429 honoured
// (the batch waits its Retry-After and is sent again), keys already taken
// reported as present, a refused link reported with the API's answer; a
// second run creates nothing.
func TestImportTwice(t *testing.T) {
	g := NewWithT(t)
	s := bulktest.New(t, func(s *bulktest.Server) { s.ThrottleFirst = true })
	s.Add("go.example.com", "k7")
	s.Add("go.example.com", "k130")
	ls := links(250)
	ls[42].Domain = "elsewhere.example.com" // not the workspace's
	ls[99].Password = "hunter2"
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	ls[99].ExpiresAt, ls[99].Tags = &exp, []string{"a", "b"}
	o := options(t, s)

	var progress bytes.Buffer
	sum, err := bulk.Create(context.Background(), ls, o, bulk.Progress{W: &progress})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sum.Created).To(Equal(247))
	g.Expect(sum.Present).To(Equal(2))
	g.Expect(sum.PresentAt).To(Equal([]string{"line 9 (go.example.com/k7)", "line 132 (go.example.com/k130)"}))
	g.Expect(sum.Failed).To(ConsistOf(bulk.Failure{At: "line 44", Address: "elsewhere.example.com/k42",
		Reason: "422 The selected domain is invalid. [domain: The selected domain is invalid.]"}))
	g.Expect(s.Links()).To(HaveLen(249))
	sent := s.Links()["go.example.com/k99"]
	g.Expect(sent).To(HaveKeyWithValue("password", "hunter2"), "the API hashes plaintext passwords")
	g.Expect(sent).To(HaveKeyWithValue("expires_at", "2030-01-02T03:04:05Z"))
	g.Expect(sent).To(HaveKeyWithValue("tags", []any{"a", "b"}))
	g.Expect(sent).NotTo(HaveKey("ios"), "unset fields are left out")

	reqs := s.Requests()
	g.Expect(reqs[0].Status).To(Equal(http.StatusTooManyRequests))
	items := 0
	for i, r := range reqs {
		g.Expect(r.Items).To(BeNumerically("<=", 100))
		if i > 0 {
			g.Expect(r.Status).To(Equal(http.StatusOK))
			g.Expect(r.At.Sub(reqs[0].At)).To(BeNumerically(">=", time.Second), "request %d waited for Retry-After: 1", i)
			items += r.Items
		}
	}
	g.Expect(items).To(Equal(250), "every link sent once after the 429")
	g.Expect(progress.String()).To(ContainSubstring("kurz import: answered 429, retrying after 1s (Retry-After)"))
	g.Expect(progress.String()).To(HaveSuffix("kurz import: 250/250 links (100%), created 247, already present 2, failed 1\n"))

	var report bytes.Buffer
	sum.WriteReport(&report)
	g.Expect(report.String()).To(MatchRegexp(`^Created 247 links, 2 already present, 1 failed, in \d`))
	g.Expect(report.String()).To(ContainSubstring("Already present (their keys are taken in the workspace; not compared, not changed): 2\n  line 9 (go.example.com/k7)\n"))
	g.Expect(report.String()).To(ContainSubstring("Failed: 1\n  line 44 (elsewhere.example.com/k42): 422 The selected domain is invalid."))

	// Again: everything is there.
	before := len(s.Requests())
	sum, err = bulk.Create(context.Background(), ls, o, bulk.Progress{W: &progress})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sum.Created).To(BeZero(), "a second run creates nothing")
	g.Expect(sum.Present).To(Equal(249))
	g.Expect(sum.Failed).To(HaveLen(1))
	g.Expect(s.Links()).To(HaveLen(249))
	g.Expect(len(s.Requests())-before).To(Equal(3), "three batches: 100, 100, 50")
}

// TestPacesToTheRateLimit: items count against the caller's limit; the
// client reads X-RateLimit-* and waits for its bucket instead of being
// refused. 630 items at 600 a minute: 600 at once, the last 30 three
// seconds later, no 429.
func TestPacesToTheRateLimit(t *testing.T) {
	g := NewWithT(t)
	s := bulktest.New(t, func(s *bulktest.Server) { s.Limit = 600 })
	start := time.Now()
	sum, err := bulk.Create(context.Background(), links(630), options(t, s), bulk.Progress{W: &bytes.Buffer{}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sum.Created).To(Equal(630))
	for _, r := range s.Requests() {
		g.Expect(r.Status).To(Equal(http.StatusOK), "paced by the headers, never refused")
	}
	g.Expect(time.Since(start)).To(BeNumerically(">=", 2900*time.Millisecond), "the bucket refills 10 items a second")
}

// TestBatchNoLargerThanTheLimit: a bucket of 99 items a minute can never
// pay for 100. The first answer (429) says so; the batch shrinks to 99 at
// once, without waiting for a Retry-After that would never be enough.
func TestBatchNoLargerThanTheLimit(t *testing.T) {
	g := NewWithT(t)
	s := bulktest.New(t, func(s *bulktest.Server) { s.Limit = 99 })
	sum, err := bulk.Create(context.Background(), links(100), options(t, s), bulk.Progress{W: &bytes.Buffer{}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sum.Created).To(Equal(100))
	reqs := s.Requests()
	g.Expect(reqs).To(HaveLen(3))
	g.Expect([]int{reqs[0].Items, reqs[1].Items, reqs[2].Items}).To(Equal([]int{100, 99, 1}))
	g.Expect([]int{reqs[0].Status, reqs[1].Status, reqs[2].Status}).To(Equal([]int{http.StatusTooManyRequests, http.StatusOK, http.StatusOK}))
	g.Expect(reqs[1].At.Sub(reqs[0].At)).To(BeNumerically("<", 10*time.Second), "not the 429's Retry-After of a batch that could never pass")
}

// TestSplitsOnTooLarge: a 413 splits the batch, and later batches are
// smaller.
func TestSplitsOnTooLarge(t *testing.T) {
	g := NewWithT(t)
	s := bulktest.New(t, func(s *bulktest.Server) { s.MaxItems = 40 })
	o := options(t, s)
	o.Concurrency = 1
	sum, err := bulk.Create(context.Background(), links(230), o, bulk.Progress{W: &bytes.Buffer{}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sum.Created).To(Equal(230))
	var sizes []int
	for _, r := range s.Requests() {
		sizes = append(sizes, r.Items)
	}
	g.Expect(sizes).To(Equal([]int{100, 50, 25, 25, 25, 25, 25, 25, 25, 25, 25, 5}))
}

// TestStops: answers no retry can fix stop the import with the API's
// message and a hint, and the summary says what was not sent.
func TestStops(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(o *bulk.Options)
		want  string
		token string
	}{
		{name: "token refused", token: "wrong", want: "answered 401: Unauthenticated. (is the token an API token"},
		{name: "no bulk API", edit: func(o *bulk.Options) { o.API += "/elsewhere" }, want: "answered 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s := bulktest.New(t, nil)
			o := options(t, s)
			if tt.token != "" {
				g.Expect(os.WriteFile(o.TokenFile, []byte(tt.token), 0o600)).To(Succeed())
			}
			if tt.edit != nil {
				tt.edit(&o)
			}
			sum, err := bulk.Create(context.Background(), links(150), o, bulk.Progress{W: &bytes.Buffer{}})
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
			g.Expect(sum.Created).To(BeZero())
			g.Expect(sum.Unsent).To(Equal(150))
			g.Expect(s.Links()).To(BeEmpty())
		})
	}
}

func TestUnreachableAPI(t *testing.T) {
	g := NewWithT(t)
	s := bulktest.New(t, nil)
	o := options(t, s)
	s.Close() // nothing listens there any more
	o.Retries = 1
	var progress bytes.Buffer
	sum, err := bulk.Create(context.Background(), links(3), o, bulk.Progress{W: &progress})
	g.Expect(err).To(MatchError(ContainSubstring("tried 2 times")))
	g.Expect(sum.Unsent).To(Equal(3))
	g.Expect(progress.String()).To(ContainSubstring("kurz import: retrying after"))
}

func TestTokenFile(t *testing.T) {
	g := NewWithT(t)
	s := bulktest.New(t, nil)
	o := options(t, s)
	g.Expect(os.WriteFile(o.TokenFile, []byte(" \n"), 0o600)).To(Succeed())
	_, err := bulk.Create(context.Background(), links(1), o, bulk.Progress{W: &bytes.Buffer{}})
	g.Expect(err).To(MatchError(ContainSubstring("is empty")))
	o.TokenFile = filepath.Join(t.TempDir(), "missing")
	_, err = bulk.Create(context.Background(), links(1), o, bulk.Progress{W: &bytes.Buffer{}})
	g.Expect(err).To(MatchError(ContainSubstring("--token-file")))
}

// TestTerminalProgress: on a terminal, one line redrawn in place with a
// bar, ended by a newline.
func TestTerminalProgress(t *testing.T) {
	g := NewWithT(t)
	s := bulktest.New(t, nil)
	var out bytes.Buffer
	_, err := bulk.Create(context.Background(), links(120), options(t, s), bulk.Progress{W: &out, Terminal: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.String()).To(HaveSuffix("\r\x1b[K[" + strings.Repeat("#", 30) + "] 120/120 links (100%), created 120, already present 0, failed 0\n"))
	g.Expect(strings.Count(out.String(), "\n")).To(Equal(1), "one line")
}
