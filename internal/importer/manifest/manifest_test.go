package manifest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"golang.org/x/crypto/bcrypt"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/importer"
	"github.com/kurz-dev/kurz/internal/optionstest"
	"github.com/kurz-dev/kurz/internal/testenv"
)

func TestName(t *testing.T) {
	g := NewWithT(t)
	n := Name("go.example.com", "Summer_Sale")
	g.Expect(n).To(MatchRegexp(`^summer-sale-[0-9a-f]{10}$`), "the API's readable prefix and a hash")
	g.Expect(Name("go.example.com", "Summer_Sale")).To(Equal(n), "the same on every run")
	g.Expect(Name("go.example.com", "summer-sale")).NotTo(Equal(n), "keys that read alike are two names")
	g.Expect(Name("other.example.com", "Summer_Sale")).NotTo(Equal(n), "the domain is part of the address")
	for _, key := range []string{"_", "-", strings.Repeat("A_", 32), "x"} {
		g.Expect(validation.IsDNS1123Subdomain(Name("go.example.com", key))).To(BeEmpty(), key)
	}
}

// sources are the importer's sample files, one per format, with the
// options each needs.
var sources = []struct {
	file string
	opts func(*importer.Options)
}{
	{file: "kurz.csv"},
	{file: "yourls-stats.json"},
	{file: "yourls_url.csv", opts: func(o *importer.Options) { o.Domain = "y.example.com" }},
	{file: "shlink-short-urls.json"},
	{file: "short_urls.csv", opts: func(o *importer.Options) {
		o.DomainMap = map[string]string{"s.test": "s2.example.com", "example.com": "e2.example.com"}
	}},
	{file: "shlink-importer.csv", opts: func(o *importer.Options) { o.Domain = "s.example.com" }},
	{file: "kutt-links.json"},
	{file: "bitly-bitlinks.json", opts: func(o *importer.Options) { o.DomainMap = map[string]string{"bit.ly": "go.example.com"} }},
	{file: "dub-links.json"},
	{file: "dub-export.csv", opts: func(o *importer.Options) { o.DomainMap = map[string]string{"dub.sh": "d.example.com"} }},
}

// readSources parses every sample; the links of all of them together.
func readSources(t *testing.T) []importer.Link {
	t.Helper()
	g := NewWithT(t)
	var links []importer.Link
	for _, s := range sources {
		data, err := os.ReadFile(filepath.Join("..", "testdata", s.file))
		g.Expect(err).NotTo(HaveOccurred())
		o := importer.DefaultOptions()
		if s.opts != nil {
			s.opts(&o)
		}
		r, err := importer.Parse(data, o)
		g.Expect(err).NotTo(HaveOccurred(), s.file)
		g.Expect(r.Links).NotTo(BeEmpty(), s.file)
		links = append(links, r.Links...)
	}
	return links
}

// TestManifestsApplyToKubeAPIServer writes the links of every sample
// format as a GitOps directory, applies it with kubectl, and finds every
// link as written; a re-run rewrites nothing and applies as unchanged.
func TestManifestsApplyToKubeAPIServer(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	links := readSources(t)
	// Shlink's sample has a "docs" on example.com as kurz.csv has one on
	// go.example.com: distinct addresses, distinct names.
	dir := filepath.Join(t.TempDir(), "links")
	o := Options{Namespace: ns, Dir: dir}

	n, err := Write(ctx, links, o, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(len(links)))
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).To(HaveLen(len(links)), "one file per link")

	out := kubectl(t, "apply", "-f", dir)
	g.Expect(strings.Count(out, " created")).To(Equal(len(links)), out)

	var list kurzv1alpha1.LinkList
	g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	g.Expect(list.Items).To(HaveLen(len(links)))
	byName := map[string]kurzv1alpha1.Link{}
	for _, l := range list.Items {
		byName[l.Name] = l
	}
	passwords := 0
	for _, l := range links {
		got, ok := byName[Name(l.Domain, l.Key)]
		g.Expect(ok).To(BeTrue(), "%s/%s applied", l.Domain, l.Key)
		want := spec(l)
		if l.Password != "" {
			passwords++
			g.Expect(got.Spec.PasswordHash).NotTo(BeNil())
			g.Expect(bcrypt.CompareHashAndPassword([]byte(*got.Spec.PasswordHash), []byte(l.Password))).To(Succeed(), "%s/%s: the hash is the password's", l.Domain, l.Key)
			cost, err := bcrypt.Cost([]byte(*got.Spec.PasswordHash))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cost).To(Equal(bcrypt.DefaultCost), "the API's cost")
			want.PasswordHash = got.Spec.PasswordHash
		}
		// Semantic: kube-apiserver's times come back in the local zone.
		g.Expect(equality.Semantic.DeepEqual(got.Spec, want)).To(BeTrue(), "%s/%s: got %+v, want %+v", l.Domain, l.Key, got.Spec, want)
	}
	g.Expect(passwords).To(Equal(2), "kurz.csv and Dub carry one password each")

	before := readAll(t, files)
	_, err = Write(ctx, links, o, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(readAll(t, files)).To(Equal(before), "a re-run writes the same bytes, password hashes included")
	out = kubectl(t, "apply", "-f", dir)
	g.Expect(strings.Count(out, " unchanged")).To(Equal(len(links)), out)
}

// TestStdoutAndFile: the same stream on stdout and in a file; a file
// re-written keeps its password hashes.
func TestStdoutAndFile(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	links := readSources(t)[:3] // kurz.csv: one with a password

	var stdout bytes.Buffer
	_, err := Write(ctx, links, Options{}, &stdout)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Count(stdout.String(), "---\n")).To(Equal(2))
	g.Expect(stdout.String()).To(HavePrefix("apiVersion: kurz.dev/v1alpha1\nkind: Link\nmetadata:\n  name: docs-"))
	g.Expect(stdout.String()).NotTo(ContainSubstring("namespace:"), "no namespace unless asked")
	g.Expect(stdout.String()).NotTo(ContainSubstring("status"))
	g.Expect(stdout.String()).NotTo(ContainSubstring("creationTimestamp"))
	g.Expect(stdout.String()).NotTo(ContainSubstring("s3cret"), "never the password")

	file := filepath.Join(t.TempDir(), "links.yaml")
	_, err = Write(ctx, links, Options{File: file}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	first, err := os.ReadFile(file)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = Write(ctx, links, Options{File: file}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	second, err := os.ReadFile(file)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(second).To(Equal(first))

	// A changed password is hashed anew.
	links[1].Password = "another one"
	_, err = Write(ctx, links, Options{File: file}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	third, err := os.ReadFile(file)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(third).NotTo(Equal(first))
	entries, err := os.ReadDir(filepath.Dir(file))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(entries).To(HaveLen(1), "no temporary file left behind")
}

func TestOptionsValidate(t *testing.T) {
	optionstest.Validate(t, DefaultOptions, []optionstest.Case[Options]{
		{Name: "dir", Edit: func(o *Options) { o.Dir = "links" }},
		{Name: "file and dir", Edit: func(o *Options) { o.Dir, o.File = "links", "links.yaml" }, Error: "--out-file and --out-dir"},
		{Name: "bad namespace", Edit: func(o *Options) { o.Namespace = "Marketing" }, Error: "--namespace"},
	})
}

func readAll(t *testing.T, files []string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		out[f] = b
	}
	return out
}
