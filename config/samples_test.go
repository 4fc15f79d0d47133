package config_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// newNamespace creates a namespace of its own for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "config-test-"}}
	NewWithT(t).Expect(k8s.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

// decodeAll reads every object of a multi-document YAML stream.
func decodeAll(t *testing.T, r io.Reader) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if err == io.EOF {
			return objs
		}
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

func TestCRDsAreEstablishedWithCategoryAndShortNames(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	for name, short := range map[string]string{"links.kurz.dev": "lnk", "domains.kurz.dev": "dom", "webhooks.kurz.dev": "wh"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: name}, crd)).To(Succeed())
		g.Expect(crd.Spec.Names.Categories).To(ConsistOf("kurz"), name)
		g.Expect(crd.Spec.Names.ShortNames).To(ConsistOf(short), name)
		g.Expect(crd.Spec.Versions).To(HaveLen(1))
		g.Expect(crd.Spec.Versions[0].Subresources.Status).NotTo(BeNil(), "%s has a status subresource", name)
	}
}

func TestEverySampleApplies(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).NotTo(BeEmpty())

	kinds := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		for _, obj := range decodeAll(t, bytes.NewReader(data)) {
			obj.SetNamespace(ns)
			g.Expect(k8s.Create(context.Background(), obj)).To(Succeed(), "%s: %s %s", filepath.Base(f), obj.GetKind(), obj.GetName())
			kinds[obj.GetKind()]++
		}
	}
	g.Expect(kinds["Domain"]).To(BeNumerically(">=", 2), "two sample domains")
	g.Expect(kinds["Link"]).To(BeNumerically(">=", 4), "several sample links")
	g.Expect(kinds["Webhook"]).To(BeNumerically(">=", 1), "a sample webhook")

	// The samples exercise the optional fields, so a schema change that drops
	// one shows up here rather than in a user's cluster.
	links := &kurzv1alpha1.LinkList{}
	g.Expect(k8s.List(context.Background(), links, client.InNamespace(ns))).To(Succeed())
	var utm, ios, expiry, tags bool
	for _, l := range links.Items {
		utm = utm || l.Spec.UTM != nil
		ios = ios || l.Spec.IOS != nil
		expiry = expiry || l.Spec.ExpiresAt != nil
		tags = tags || len(l.Spec.Tags) > 0
	}
	g.Expect([]bool{utm, ios, expiry, tags}).To(HaveEach(BeTrue()), "samples use utm, targeting, expiry and tags")
}

func TestKubectlGetKurzShowsPrinterColumns(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	out := kubectl(t, "apply", "-n", ns, "-f", filepath.Join(testenv.RepoRoot(), "config", "samples"))
	g.Expect(out).To(ContainSubstring("link.kurz.dev/docs created"))

	got := kubectl(t, "get", "kurz", "-n", ns)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	g.Expect(lines).To(ContainElement(MatchRegexp(`^NAME\s+DOMAIN\s+KEY\s+URL\s+CLICKS\s+READY\s+REASON\s+AGE$`)), got)
	g.Expect(lines).To(ContainElement(MatchRegexp(`^NAME\s+DOMAIN\s+STATUS\s+READY\s+REASON\s+TLS\s+TXT RECORD\s+AGE$`)), got)
	g.Expect(lines).To(ContainElement(MatchRegexp(`^link.kurz.dev/docs\s+go.example.com\s+docs\s+https://docs.example.com/getting-started\s`)), got)
	g.Expect(lines).To(ContainElement(MatchRegexp(`^domain.kurz.dev/acme-link\s+acme.link\s`)), got)
	g.Expect(lines).To(ContainElement(MatchRegexp(`^NAME\s+READY\s+REASON\s+HOST\s+EVENTS\s+AGE$`)), got)
	g.Expect(lines).To(ContainElement(MatchRegexp(`^webhook.kurz.dev/crm\s+.*\["link.created","link.updated","link.deleted","link.clicked","domain.verified"\]`)), got)
}

// kubectl runs the kubectl of the control plane and returns its stdout.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	k, err := admin.Kubectl()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	stdout, stderr, err := k.Run(args...)
	out, _ := io.ReadAll(stdout)
	errOut, _ := io.ReadAll(stderr)
	NewWithT(t).Expect(err).NotTo(HaveOccurred(), "kubectl %v: %s", args, errOut)
	return string(out)
}

// manifest builds an object from YAML the way kubectl would send it, so values
// of the wrong shape reach kube-apiserver unchanged.
func manifest(t *testing.T, kind, name, ns, spec string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{}}
	var s map[string]any
	NewWithT(t).Expect(yaml.Unmarshal([]byte(spec), &s)).To(Succeed(), spec)
	u.SetAPIVersion(kurzv1alpha1.GroupVersion.String())
	u.SetKind(kind)
	u.SetName(name)
	u.SetNamespace(ns)
	u.Object["spec"] = s
	return u
}
