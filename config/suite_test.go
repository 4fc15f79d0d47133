package config_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kurz-dev/kurz/internal/testenv"
)

var (
	cfg *rest.Config
	k8s client.Client
	// admin runs kubectl on the control plane: admin.Kubectl().
	admin *envtest.AuthenticatedUser
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{Admin: true}, func(e *testenv.Env) error {
		cfg, k8s, admin = e.Config, e.Client, e.Admin
		return nil
	})
}

// kustomize renders config/<dir> as `make deploy` does (kubectl kustomize).
func kustomize(t *testing.T, dir string) []byte {
	t.Helper()
	g := NewWithT(t)
	kubectl := filepath.Join(testenv.Binaries(t), "kubectl")
	out, err := exec.Command(kubectl, "kustomize", filepath.Join(testenv.RepoRoot(), "config", dir)).Output()
	g.Expect(err).NotTo(HaveOccurred(), "kubectl kustomize config/%s", dir)
	return out
}
