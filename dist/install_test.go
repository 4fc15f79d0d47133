package dist_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/kurz-dev/kurz/internal/testenv"
)

func readInstallYAML(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "dist", "install.yaml"))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return b
}

// TestInstallYAMLIsAccepted applies the committed dist/install.yaml with a
// server-side dry run: kube-apiserver accepts every object, and the manager
// runs config/'s image, replicas, flags and resources.
func TestInstallYAMLIsAccepted(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	manifests := readInstallYAML(t)
	objs := decodeAll(t, manifests)
	stored := dryRunApply(t, "kurz-system", manifests)
	for _, o := range objs {
		g.Expect(stored).To(HaveKey(key(o)), "kube-apiserver accepted %s", key(o))
	}

	config, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "manager", "manager.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	wantReplicas, want := managerContainer(t, decodeAll(t, config)[0])
	replicas, c := managerContainer(t, stored["Deployment/kurz"])
	g.Expect(c.Image).To(Equal("kurz:latest"))
	g.Expect(replicas).To(Equal(wantReplicas))
	g.Expect(c.Args).To(Equal(want.Args))
	// The API server defaults parts of env (fieldRef.apiVersion): compare
	// the names, and where the cookie key comes from.
	envNames := func(env []corev1.EnvVar) (names []string) {
		for _, e := range env {
			names = append(names, e.Name)
		}
		return names
	}
	g.Expect(envNames(c.Env)).To(Equal(envNames(want.Env)))
	g.Expect(cookieSecretRef(c)).To(Equal(cookieSecretRef(want)))
	g.Expect(c.VolumeMounts).To(Equal(want.VolumeMounts))
	g.Expect(c.Resources).To(Equal(want.Resources))
	// kurz sizes the Go heap below the container's memory limit, which is
	// set; a GOMEMLIMIT equal to it would let the kernel kill the process
	// first (cmd/kurz/memlimit.go).
	g.Expect(c.Resources.Limits).To(HaveKey(corev1.ResourceMemory))
	g.Expect(c.Env).NotTo(ContainElement(HaveField("Name", "GOMEMLIMIT")))
}

// TestBuildInstallerSetsTheImage runs what `make build-installer IMG=...`
// runs on config/default and applies the result: the manager runs IMG.
func TestBuildInstallerSetsTheImage(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	kubectl, err := admin.Kubectl()
	g.Expect(err).NotTo(HaveOccurred())
	rendered, err := exec.Command(kubectl.Path, "kustomize", filepath.Join(testenv.RepoRoot(), "config", "default")).Output()
	g.Expect(err).NotTo(HaveOccurred(), "kubectl kustomize config/default")

	gen := exec.Command("go", "run", "./hack/gen-dist", "-install", "-", "-image", "registry.example.com/team/kurz:v1.2.3")
	gen.Dir = testenv.RepoRoot()
	gen.Stdin = bytes.NewReader(rendered)
	var stderr bytes.Buffer
	gen.Stderr = &stderr
	manifests, err := gen.Output()
	g.Expect(err).NotTo(HaveOccurred(), "gen-dist: %s", stderr.String())

	stored := dryRunApply(t, "kurz-system", manifests)
	_, c := managerContainer(t, stored["Deployment/kurz"])
	g.Expect(c.Image).To(Equal("registry.example.com/team/kurz:v1.2.3"))
	g.Expect(stored).To(HaveKey("CustomResourceDefinition/links.kurz.dev"))
	g.Expect(stored).To(HaveKey("Namespace/kurz-system"))
}
