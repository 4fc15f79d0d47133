package manifest

import (
	"context"
	"io"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// The manifests are applied with kubectl to a real kube-apiserver with
// kurz's CRDs: the CRD's schema and CEL rules are what must accept them.
// The suite is lazy: only tests that call testenv.Need start it, so the
// writer's own tests run in a second without a control plane.
var (
	k8s   client.Client
	admin *envtest.AuthenticatedUser
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{Admin: true}, func(e *testenv.Env) error {
		k8s, admin = e.Client, e.Admin
		return nil
	})
}

// newNamespace creates a namespace of its own for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "import-test-"}}
	NewWithT(t).Expect(k8s.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

// kubectl runs the control plane's kubectl and returns its stdout.
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
