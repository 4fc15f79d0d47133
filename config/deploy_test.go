package config_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestDeployManifestsAreAccepted renders config/default as `make deploy` does
// and has kube-apiserver validate every object with a server-side dry run.
func TestDeployManifestsAreAccepted(t *testing.T) {
	g := NewWithT(t)
	kubectl, err := admin.Kubectl()
	g.Expect(err).NotTo(HaveOccurred())
	kubectlPath := kubectl.Path
	rendered, err := exec.Command(kubectlPath, "kustomize", filepath.Join(testenv.RepoRoot(), "config", "default")).Output()
	g.Expect(err).NotTo(HaveOccurred(), "kubectl kustomize config/default")

	objs := decodeAll(t, bytes.NewReader(rendered))
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	g.Expect(kinds).To(HaveKeyWithValue("CustomResourceDefinition", 2))
	g.Expect(kinds).To(HaveKeyWithValue("Deployment", 1))
	g.Expect(kinds).To(HaveKeyWithValue("PodDisruptionBudget", 1))
	g.Expect(kinds).To(HaveKey("ClusterRole"))
	g.Expect(kinds).To(HaveKey("Service"))

	// A dry run does not create the namespace the other objects live in.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kurz-system"}}
	if err := k8s.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	apply := exec.Command(kubectlPath, append(kubectl.Opts,
		"apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", "-")...)
	apply.Stdin = bytes.NewReader(rendered)
	out, err := apply.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	for _, o := range objs {
		accepted := `(?m)^` + strings.ToLower(o.GetKind()) + `(\.[a-z0-9.]+)?/` + regexp.QuoteMeta(o.GetName()) + ` serverside-applied \(server dry run\)$`
		g.Expect(string(out)).To(MatchRegexp(accepted), "kube-apiserver accepted %s %s", o.GetKind(), o.GetName())
	}
}
