package e2e

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

// kurzImport runs `bin/kurz import --api` against kurz dev with the token
// a user copies from DIR/token, and returns its report (stderr and stdout
// together: manifests would go to stdout, reports to stderr) and its error.
func (k *kurzDev) kurzImport(t *testing.T, args ...string) (string, error) {
	t.Helper()
	args = append([]string{"import", "--api", "http://" + k.apiAddr, "--token-file", filepath.Join(k.dataDir, "token")}, args...)
	out, err := exec.Command(kurzBin(t), args...).CombinedOutput()
	return string(out), err
}

// lookup is GET /api/v1/links/lookup: the link holding domain/key, or nil
// when the API answers 404.
func (k *kurzDev) lookup(t *testing.T, domain, key string) map[string]any {
	t.Helper()
	code, out := k.call(t, http.MethodGet, "/api/v1/links/lookup?"+url.Values{"domain": {domain}, "key": {key}}.Encode(), nil)
	if code == http.StatusNotFound {
		return nil
	}
	NewWithT(t).Expect(code).To(Equal(http.StatusOK), "lookup %s/%s: %v", domain, key, out)
	return out
}

// writeFile writes a source file of the test and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	NewWithT(t).Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
	return path
}

// TestImportThroughAPI imports a kurz CSV through the real bulk API: the
// links are created with what the file says, and a second run creates
// nothing and names the links already there.
func TestImportThroughAPI(t *testing.T) {
	g := NewWithT(t)
	k := devT(t)
	k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/domains", map[string]any{"domain": "import.e2e.example"})

	csv := writeFile(t, "links.csv", "domain,key,url,tags,password,expires_at\n"+
		"import.e2e.example,docs,https://docs.example.com/start,docs|onboarding,,\n"+
		"import.e2e.example,sale,https://shop.example.com/sale,,s3cret,2030-09-30T23:59:59Z\n"+
		"IMPORT.e2e.example.,q,\"https://example.com/search?q=a,b\",,,\n")
	out, err := k.kurzImport(t, csv)
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	g.Expect(out).To(ContainSubstring("Read 3 links from " + csv + " (csv)."))
	g.Expect(out).To(ContainSubstring("Created 3 links, 0 already present, 0 failed"))

	docs := k.lookup(t, "import.e2e.example", "docs")
	g.Expect(docs).NotTo(BeNil(), "the imported link is in the workspace")
	g.Expect(docs["url"]).To(Equal("https://docs.example.com/start"))
	g.Expect(docs["tags"]).To(Equal([]any{"docs", "onboarding"}))
	sale := k.lookup(t, "import.e2e.example", "sale")
	g.Expect(sale).NotTo(BeNil())
	g.Expect(sale["password"]).To(BeNumerically("==", 1), "the password carried over (the API keeps its hash)")
	g.Expect(sale["expires_at"]).To(Equal("2030-09-30T23:59:59.000000Z"))
	q := k.lookup(t, "import.e2e.example", "q")
	g.Expect(q).NotTo(BeNil(), "the domain was normalized")
	g.Expect(q["url"]).To(Equal("https://example.com/search?q=a,b"))
	g.Expect(k.redirect(t, "import.e2e.example", "docs").Header.Get("Location")).To(Equal("https://docs.example.com/start"))

	// The same file again: nothing created twice, every link named.
	out, err = k.kurzImport(t, csv)
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	g.Expect(out).To(ContainSubstring("Created 0 links, 3 already present, 0 failed"))
	g.Expect(out).To(ContainSubstring("Already present (their keys are taken in the workspace; not compared, not changed): 3"))
	g.Expect(out).To(ContainSubstring("line 2 (import.e2e.example/docs)"))
	g.Expect(out).To(ContainSubstring("line 4 (import.e2e.example/q)"))
	list := k.must(t, http.StatusOK, http.MethodGet, "/api/v1/links?domain=import.e2e.example", nil)
	g.Expect(list["meta"].(map[string]any)["total"]).To(BeNumerically("==", 3), "no duplicates: %v", list["data"])
}

// TestImportShlinkThroughAPI imports pages of Shlink's GET
// /rest/v3/short-urls (docs/import.md names the version) through the real
// API: the default domain (null, the host of shortUrl) moves to kurz's with
// --map-domain, validUntil becomes the expiry, and what kurz has no place
// for is listed at the end.
func TestImportShlinkThroughAPI(t *testing.T) {
	g := NewWithT(t)
	k := devT(t)
	k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/domains", map[string]any{"domain": "shlink.e2e.example"})

	src := writeFile(t, "shlink.json", `{"shortUrls": {"data": [
  {"shortCode": "steam", "shortUrl": "https://s.test/steam", "longUrl": "https://store.steampowered.com",
   "dateCreated": "2016-08-21T20:34:16+02:00", "visitsSummary": {"total": 328, "nonBots": 328, "bots": 0},
   "tags": ["games", "tech"], "meta": {"validSince": null, "validUntil": "2031-01-01T00:00:00+01:00", "maxVisits": 100},
   "domain": null, "title": "Welcome to Steam", "crawlable": false, "forwardQuery": true, "hasRedirectRules": false},
  {"shortCode": "docs", "shortUrl": "https://s.test/docs", "longUrl": "https://shlink.io/documentation",
   "dateCreated": "2023-05-01T20:34:16+02:00", "visitsSummary": {"total": 0, "nonBots": 0, "bots": 0},
   "tags": [], "meta": {"validSince": null, "validUntil": null, "maxVisits": null},
   "domain": null, "title": null, "crawlable": true, "forwardQuery": true, "hasRedirectRules": false}
], "pagination": {"currentPage": 1, "pagesCount": 1, "itemsPerPage": 10, "itemsInCurrentPage": 2, "totalItems": 2}}}`)
	out, err := k.kurzImport(t, "--map-domain", "s.test=shlink.e2e.example", src)
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	g.Expect(out).To(ContainSubstring("(shlink-json)"))
	g.Expect(out).To(ContainSubstring("Created 2 links, 0 already present, 0 failed"))
	g.Expect(out).To(MatchRegexp(`maxVisits\s+1 link`), "what cannot carry over is listed")

	steam := k.lookup(t, "shlink.e2e.example", "steam")
	g.Expect(steam).NotTo(BeNil())
	g.Expect(steam["url"]).To(Equal("https://store.steampowered.com"))
	g.Expect(steam["tags"]).To(Equal([]any{"games", "tech"}))
	g.Expect(steam["expires_at"]).To(Equal("2030-12-31T23:00:00.000000Z"))
	g.Expect(k.lookup(t, "shlink.e2e.example", "docs")).NotTo(BeNil())
}

// TestImportMixedThroughAPI: a file with bad rows stops before anything is
// sent and names them; with --skip-invalid the good rows are created, and
// a row the API refuses (a domain outside the workspace) is reported with
// the API's answer and fails the command.
func TestImportMixedThroughAPI(t *testing.T) {
	g := NewWithT(t)
	k := devT(t)
	k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/domains", map[string]any{"domain": "mixed.e2e.example"})

	csv := writeFile(t, "mixed.csv", "domain,key,url\n"+
		"mixed.e2e.example,good1,https://example.com/1\n"+
		"mixed.e2e.example,bad url,javascript:alert(1)\n"+
		"elsewhere.e2e.example,stray,https://example.com/stray\n"+
		"mixed.e2e.example,good2,https://example.com/2\n")
	out, err := k.kurzImport(t, csv)
	g.Expect(err).To(HaveOccurred(), "%s", out)
	g.Expect(out).To(ContainSubstring("Invalid: 1 record"))
	g.Expect(out).To(ContainSubstring("line 3: "))
	g.Expect(out).To(ContainSubstring("1 invalid records, nothing written"))
	g.Expect(k.lookup(t, "mixed.e2e.example", "good1")).To(BeNil(), "nothing was sent")

	out, err = k.kurzImport(t, "--skip-invalid", csv)
	g.Expect(err).To(MatchError(ContainSubstring("exit status")), "%s", out)
	g.Expect(out).To(ContainSubstring("Created 2 links, 0 already present, 1 failed"))
	g.Expect(out).To(ContainSubstring("line 4 (elsewhere.e2e.example/stray): 422 The selected domain is invalid."))
	g.Expect(out).To(ContainSubstring("Invalid, skipped: 1 record"))
	g.Expect(out).To(ContainSubstring("the API refused 1 links"))
	g.Expect(k.lookup(t, "mixed.e2e.example", "good1")).NotTo(BeNil())
	g.Expect(k.lookup(t, "mixed.e2e.example", "good2")).NotTo(BeNil())
	g.Expect(k.lookup(t, "elsewhere.e2e.example", "stray")).To(BeNil())
}
