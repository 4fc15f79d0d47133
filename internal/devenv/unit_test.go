package devenv

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/config/thirdparty"
)

func TestLockDir(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	first, err := lockDir(dir)
	g.Expect(err).NotTo(HaveOccurred())
	// flock conflicts between open file descriptions, even in one process.
	_, err = lockDir(dir)
	g.Expect(err).To(MatchError(ContainSubstring("is in use by another kurz dev (pid %d)", os.Getpid())))
	g.Expect(first.unlock()).To(Succeed())
	again, err := lockDir(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.unlock()).To(Succeed())
}

func TestPKIPersists(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	_, err := loadOrCreatePKI(dir)
	g.Expect(err).NotTo(HaveOccurred())
	files := []string{"ca.crt", "ca.key", "sa.key", "sa.pub", "apiserver.crt", "apiserver.key", "admin.crt", "admin.key"}
	before := map[string][]byte{}
	for _, f := range files {
		before[f], err = os.ReadFile(filepath.Join(dir, f))
		g.Expect(err).NotTo(HaveOccurred(), f)
	}
	for _, f := range []string{"ca.key", "sa.key", "apiserver.key", "admin.key"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)), f)
	}

	p, err := loadOrCreatePKI(dir)
	g.Expect(err).NotTo(HaveOccurred())
	for _, f := range files {
		g.Expect(os.ReadFile(filepath.Join(dir, f))).To(Equal(before[f]), "%s changed on reload", f)
	}
	admin, err := parseCert(p.adminCertPEM)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(admin.Subject.Organization).To(ConsistOf("system:masters"))
	g.Expect(admin.CheckSignatureFrom(p.ca)).To(Succeed())

	// A lost certificate is reissued from the same CA and key.
	g.Expect(os.Remove(filepath.Join(dir, "apiserver.crt"))).To(Succeed())
	p, err = loadOrCreatePKI(dir)
	g.Expect(err).NotTo(HaveOccurred())
	data, err := os.ReadFile(filepath.Join(dir, "apiserver.crt"))
	g.Expect(err).NotTo(HaveOccurred())
	serving, err := parseCert(data)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(serving.CheckSignatureFrom(p.ca)).To(Succeed())
	g.Expect(serving.VerifyHostname("127.0.0.1")).To(Succeed())
	g.Expect(serving.VerifyHostname("localhost")).To(Succeed())
	g.Expect(serving.ExtKeyUsage).To(ConsistOf(x509.ExtKeyUsageServerAuth))
	g.Expect(os.ReadFile(filepath.Join(dir, "apiserver.key"))).To(Equal(before["apiserver.key"]))
	g.Expect(os.ReadFile(filepath.Join(dir, "sa.key"))).To(Equal(before["sa.key"]))
}

func TestFindBinaries(t *testing.T) {
	fake := func(t *testing.T, dir string, names ...string) {
		g := NewWithT(t)
		g.Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
		for _, n := range names {
			g.Expect(os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755)).To(Succeed())
		}
	}
	t.Run("KUBEBUILDER_ASSETS without binaries", func(t *testing.T) {
		g := NewWithT(t)
		dir := t.TempDir()
		fake(t, dir, "etcd")
		t.Setenv("KUBEBUILDER_ASSETS", dir)
		_, err := findBinaries()
		g.Expect(err).To(MatchError(And(ContainSubstring("KUBEBUILDER_ASSETS="+dir), ContainSubstring("kube-apiserver"), ContainSubstring("make control-plane"))))
	})
	t.Run("KUBEBUILDER_ASSETS wins", func(t *testing.T) {
		g := NewWithT(t)
		dir := t.TempDir()
		fake(t, dir, "etcd", "kube-apiserver")
		t.Setenv("KUBEBUILDER_ASSETS", dir)
		b, err := findBinaries()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(b.Etcd).To(Equal(filepath.Join(dir, "etcd")))
		g.Expect(b.Kubectl).To(BeEmpty())
	})
	t.Run("bin/k8s in the working directory", func(t *testing.T) {
		g := NewWithT(t)
		wd := t.TempDir()
		fake(t, filepath.Join(wd, "bin", "k8s"), "etcd", "kube-apiserver", "kubectl")
		t.Setenv("KUBEBUILDER_ASSETS", "")
		t.Chdir(wd)
		b, err := findBinaries()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(b.KubeAPIServer).To(HaveSuffix(filepath.Join("bin", "k8s", "kube-apiserver")))
		g.Expect(b.Kubectl).NotTo(BeEmpty())
	})
	t.Run("nothing anywhere", func(t *testing.T) {
		g := NewWithT(t)
		t.Setenv("KUBEBUILDER_ASSETS", "")
		t.Chdir(t.TempDir())
		_, err := findBinaries()
		g.Expect(err).To(MatchError(ContainSubstring("run `make control-plane`")))
	})
}

func TestDialAddrAndShellQuote(t *testing.T) {
	g := NewWithT(t)
	for in, want := range map[string]string{
		":8080":          "127.0.0.1:8080",
		"0.0.0.0:80":     "127.0.0.1:80",
		"[::]:80":        "127.0.0.1:80",
		"127.0.0.1:8081": "127.0.0.1:8081",
		"[::1]:1":        "[::1]:1",
	} {
		g.Expect(dialAddr(in)).To(Equal(want), in)
	}
	for in, want := range map[string]string{
		".kurz/token":    ".kurz/token",
		"/tmp/a b/token": "'/tmp/a b/token'",
		"it's":           `'it'\''s'`,
		"":               "''",
	} {
		g.Expect(shellQuote(in)).To(Equal(want), in)
	}
}

func TestEmbeddedManifests(t *testing.T) {
	g := NewWithT(t)
	crds, err := embeddedCRDs()
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, c := range crds {
		names = append(names, c.GetKind()+"/"+c.GetName())
	}
	g.Expect(names).To(ConsistOf("CustomResourceDefinition/links.kurz.dev", "CustomResourceDefinition/domains.kurz.dev", "CustomResourceDefinition/webhooks.kurz.dev"))
}

func TestMetricsURL(t *testing.T) {
	g := NewWithT(t)
	g.Expect(MetricsURL("0", true)).To(BeEmpty())
	g.Expect(MetricsURL(":8082", false)).To(Equal("http://127.0.0.1:8082/metrics"))
	g.Expect(MetricsURL("127.0.0.1:8082", true)).To(HavePrefix("https://127.0.0.1:8082/metrics "))
}

// kurz dev brings the Gateway API's standard channel: the CRDs of the kinds
// kurz keeps are embedded, and nothing else (the admission policy stays
// out).
func TestEmbeddedGatewayAPICRDs(t *testing.T) {
	objs, err := crdsIn(thirdparty.GatewayAPI)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, u := range objs {
		if u.GetKind() != "CustomResourceDefinition" {
			t.Errorf("%s %s is not a CRD", u.GetKind(), u.GetName())
		}
		if ch := u.GetAnnotations()["gateway.networking.k8s.io/channel"]; ch != "standard" {
			t.Errorf("CRD %s: channel %q, want standard", u.GetName(), ch)
		}
		names[u.GetName()] = true
	}
	for _, want := range []string{gatewayCRD, "httproutes.gateway.networking.k8s.io", "listenersets.gateway.networking.k8s.io"} {
		if !names[want] {
			t.Errorf("CRD %s is not embedded", want)
		}
	}
}
