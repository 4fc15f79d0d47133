package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// pages are the docs pages, without the README and CONTRIBUTING.md.
func pages(t *testing.T) []string {
	t.Helper()
	p, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(p) < 5 {
		t.Fatalf("found only %d pages in docs/", len(p))
	}
	return p
}

// TestRelativeLinksResolve: every relative link of the README,
// CONTRIBUTING.md and the docs pages names a file or directory of the
// repository, and every #anchor a heading of the page it points into.
func TestRelativeLinksResolve(t *testing.T) {
	g := NewWithT(t)
	files := append([]string{"../README.md", "../CONTRIBUTING.md"}, pages(t)...)
	var problems []string
	checked := 0
	for _, f := range files {
		p, err := checkLinks(f)
		g.Expect(err).NotTo(HaveOccurred())
		problems = append(problems, p...)
		b, err := os.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		checked += len(links(string(b)))
	}
	g.Expect(checked).To(BeNumerically(">", 50), "the links were not found")
	g.Expect(problems).To(BeEmpty(), "broken links:\n%s", strings.Join(problems, "\n"))
}

// TestContentsLists: every docs page opens with a contents list of its
// sections.
func TestContentsLists(t *testing.T) {
	g := NewWithT(t)
	for _, p := range pages(t) {
		problems, err := checkContents(p)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(problems).To(BeEmpty(), "%s", strings.Join(problems, "\n"))
	}
}

// TestCheckersFindBrokenLinks shows the checks can fail: each kind of
// broken link, and a contents list that misses a section, is reported.
func TestCheckersFindBrokenLinks(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		g.Expect(os.WriteFile(p, []byte(text), 0o600)).To(Succeed())
		return p
	}
	write("other.md", "# Other\n\n## A replica's start\n\n## Trying it with `kurz dev`\n\n## Twice\n\n## Twice\n")
	page := write("page.md", strings.Join([]string{
		"# Page",
		"",
		"Contents:",
		"",
		"- [Here](#here)",
		"",
		"## Here",
		"",
		"Fine: [a](other.md), [b](other.md#a-replicas-start), [c](other.md#trying-it-with-kurz-dev),",
		"[d](other.md#twice-1), [e](#here), [f](https://example.com/missing.md), [g](./).",
		"Broken: [h](missing.md), [i](other.md#no-such-heading), [j](#nowhere), [k](other.md#twice-2).",
		"Not links: `[l](missing.md)`, and in a block:",
		"",
		"```",
		"[m](missing.md)",
		"## Not a heading",
		"```",
		"",
		"## Not listed",
	}, "\n"))

	problems, err := checkLinks(page)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(problems).To(HaveLen(4), "%s", strings.Join(problems, "\n"))
	for i, target := range []string{"missing.md: no such file", "other.md#no-such-heading: no such heading", "#nowhere: no such heading", "other.md#twice-2: no such heading"} {
		g.Expect(problems[i]).To(ContainSubstring(target))
	}

	problems, err = checkContents(page)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(problems).To(ConsistOf(ContainSubstring("does not match")))
}

// TestSlug pins GitHub's anchors for the kinds of heading the pages have.
func TestSlug(t *testing.T) {
	g := NewWithT(t)
	for heading, want := range map[string]string{
		"How it scales, and its limits":                   "how-it-scales-and-its-limits",
		"A replica's start":                               "a-replicas-start",
		"Trying it with `kurz dev`":                       "trying-it-with-kurz-dev",
		"Measured at 1 000 000 links":                     "measured-at-1-000-000-links",
		"Domain verification (DNS)":                       "domain-verification-dns",
		"The redirect server: connections and throughput": "the-redirect-server-connections-and-throughput",
		"[Flux](https://fluxcd.io) and snake_case":        "flux-and-snake_case",
	} {
		g.Expect(slug(heading)).To(Equal(want), heading)
	}
}
