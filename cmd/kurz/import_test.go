package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/importer/bulk/bulktest"
)

// testdata is the importer's sample of each format.
func testdata(file string) string {
	return filepath.Join("..", "..", "internal", "importer", "testdata", file)
}

func TestParseImportFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // error substring; "" for valid
	}{
		{name: "manifests", args: []string{"-o", "yaml", "f.csv"}},
		{name: "manifests to a directory", args: []string{"--output", "yaml", "--out-dir", "links", "--namespace", "marketing", "f.csv"}},
		{name: "through the API", args: []string{"--api", "https://kurz.example.com", "--token-file", "t", "--batch-size", "50", "f.csv"}},
		{name: "stdin", args: []string{"-o", "yaml", "-"}},
		{name: "nowhere", args: []string{"f.csv"}, want: "say where the links go"},
		{name: "both", args: []string{"-o", "yaml", "--api", "https://kurz.example.com", "--token-file", "t", "f.csv"}, want: "choose one"},
		{name: "json", args: []string{"-o", "json", "f.csv"}, want: `-o "json": only yaml`},
		{name: "API flags without --api", args: []string{"-o", "yaml", "--token-file", "t", "f.csv"}, want: "go with --api"},
		{name: "manifest flags with --api", args: []string{"--api", "https://kurz.example.com", "--token-file", "t", "--out-dir", "x", "f.csv"}, want: "go with -o yaml"},
		{name: "no token", args: []string{"--api", "https://kurz.example.com", "f.csv"}, want: "--token-file: required"},
		{name: "no file", args: []string{"-o", "yaml"}, want: "give one source file"},
		{name: "two files", args: []string{"-o", "yaml", "a", "b"}, want: "give one source file"},
		{name: "bad format", args: []string{"-o", "yaml", "--format", "xls", "f.csv"}, want: "--format"},
		{name: "unknown flag", args: []string{"-o", "yaml", "--nope", "f.csv"}, want: "not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseImportFlags(tt.args, io.Discard)
			if tt.want == "" {
				NewWithT(t).Expect(err).NotTo(HaveOccurred())
			} else {
				NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tt.want)))
			}
		})
	}
}

// runImportTest runs `kurz import args` and returns stdout and stderr.
func runImportTest(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = importLinks(context.Background(), args, strings.NewReader(stdin), &out, &errOut, false)
	return out.String(), errOut.String(), err
}

func TestImportManifests(t *testing.T) {
	g := NewWithT(t)
	stdout, stderr, err := runImportTest(t, "", "-o", "yaml", "--map-domain", "dub.sh=go.example.com", testdata("dub-export.csv"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Count(stdout, "kind: Link\n")).To(Equal(2))
	g.Expect(stdout).To(ContainSubstring("  domain: go.example.com\n  key: launch\n"))
	g.Expect(stderr).To(ContainSubstring("Read 2 links from " + testdata("dub-export.csv") + " (dub-csv).\n"))
	g.Expect(stderr).To(ContainSubstring("Wrote 2 Link manifests.\n"))
	g.Expect(stderr).To(ContainSubstring("Left out on purpose: 1 record\n  line 4: the root link of dub.sh"))
	g.Expect(stderr).To(ContainSubstring("Not carried over (kurz has no place for them), per source field:\n"))
	g.Expect(stderr).To(MatchRegexp(`Created at\s+2 links  \(kurz stamps its own creation time\)`))

	// From stdin, into a directory.
	src, err := os.ReadFile(testdata("kurz.csv"))
	g.Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(t.TempDir(), "links")
	stdout, stderr, err = runImportTest(t, string(src), "-o", "yaml", "--out-dir", dir, "--namespace", "marketing", "-")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stdout).To(BeEmpty())
	g.Expect(stderr).To(ContainSubstring("Wrote 3 Link manifests to " + dir))
	g.Expect(stderr).To(ContainSubstring("Every field of the 3 links carried over."))
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	g.Expect(files).To(HaveLen(3))
}

// TestImportStopsOnInvalid: one invalid record and nothing is written,
// unless --skip-invalid.
func TestImportStopsOnInvalid(t *testing.T) {
	g := NewWithT(t)
	dir := filepath.Join(t.TempDir(), "links")
	_, stderr, err := runImportTest(t, "", "-o", "yaml", "--out-dir", dir, testdata("kutt-links.json"))
	g.Expect(err).To(MatchError("1 invalid records, nothing written: fix them, or pass --skip-invalid to import the 2 valid links"))
	g.Expect(stderr).To(ContainSubstring("Invalid: 1 record\n  item 3: protected by a password Kutt does not export"))
	g.Expect(dir).NotTo(BeADirectory())

	_, stderr, err = runImportTest(t, "", "-o", "yaml", "--out-dir", dir, "--skip-invalid", testdata("kutt-links.json"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stderr).To(ContainSubstring("Wrote 2 Link manifests"))
	g.Expect(stderr).To(ContainSubstring("Invalid, skipped: 1 record\n  item 3:"))
	g.Expect(stderr).To(ContainSubstring("Left out on purpose: 1 record\n  item 4: banned in Kutt"))
}

// TestImportThroughTheAPI: `kurz import --api` against a server of the
// bulk contract: created, then nothing created the second time; the report
// ends with what could not carry over.
func TestImportThroughTheAPI(t *testing.T) {
	g := NewWithT(t)
	s := bulktest.New(t, func(s *bulktest.Server) { s.ThrottleFirst = true })
	token := filepath.Join(t.TempDir(), "token")
	g.Expect(os.WriteFile(token, []byte(s.Token), 0o600)).To(Succeed())
	args := []string{"--api", s.URL, "--token-file", token, "--map-domain", "dub.sh=go.example.com", testdata("dub-links.json")}

	stdout, stderr, err := runImportTest(t, "", args...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stdout).To(BeEmpty())
	g.Expect(stderr).To(ContainSubstring("kurz import: answered 429, retrying after 1s (Retry-After)\n"))
	g.Expect(stderr).To(ContainSubstring("kurz import: 2/2 links (100%), created 2, already present 0, failed 0\n"))
	g.Expect(stderr).To(MatchRegexp(`Created 2 links, 0 already present, 0 failed, in [0-9.]+m?s\.\n`))
	g.Expect(stderr).To(ContainSubstring("Left out on purpose: 2 records\n  item 3: the root link of dub.sh"))
	g.Expect(stderr).To(MatchRegexp(`Not carried over \(kurz has no place for them\), per source field:\n  createdAt\s+2 links  \(kurz stamps its own creation time\)\n`))
	g.Expect(stderr).To(MatchRegexp(`\n  geo\s+1 link\s+\(kurz has no geo targeting\)\n`))
	g.Expect(stderr).NotTo(ContainSubstring(s.Token), "the token is never printed")
	g.Expect(stderr).NotTo(ContainSubstring("hunter2"), "nor a password")
	g.Expect(s.Links()).To(HaveKey("go.example.com/launch"))

	_, stderr, err = runImportTest(t, "", args...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stderr).To(MatchRegexp(`Created 0 links, 2 already present, 0 failed`))
	g.Expect(stderr).To(ContainSubstring("  item 1 (go.example.com/launch)\n  item 2 (go.example.com/crm)\n"))
	g.Expect(s.Links()).To(HaveLen(2))

	// A link the API refuses makes the import fail, after the report.
	_, stderr, err = runImportTest(t, "", "--api", s.URL, "--token-file", token, testdata("dub-links.json"))
	g.Expect(err).To(MatchError("the API refused 2 links (listed above)"))
	g.Expect(stderr).To(ContainSubstring("Failed: 2\n  item 1 (dub.sh/launch): 422 The selected domain is invalid."))
	g.Expect(stderr).To(ContainSubstring("Not carried over"))
}

// TestImportInterrupted: Ctrl-C (the context's end) stops the import; the
// report still says what was not sent.
func TestImportInterrupted(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The first answer is a 429 (Retry-After: 1); interrupted meanwhile.
	s := bulktest.New(t, func(s *bulktest.Server) {
		s.ThrottleFirst = true
		s.Answered = func(bulktest.Request) { cancel() }
	})
	token := filepath.Join(t.TempDir(), "token")
	g.Expect(os.WriteFile(token, []byte(s.Token), 0o600)).To(Succeed())
	var stdout, stderr bytes.Buffer
	err := importLinks(ctx, []string{"--api", s.URL, "--token-file", token, testdata("kurz.csv")}, nil, &stdout, &stderr, false)
	g.Expect(err).To(MatchError("interrupted"))
	g.Expect(stderr.String()).To(ContainSubstring("Created 0 links, 0 already present, 0 failed"))
	g.Expect(stderr.String()).To(ContainSubstring("Not sent: 3 links (the import stopped; run it again to go on, nothing is created twice)."))
	g.Expect(s.Links()).To(BeEmpty())
}
