package config_test

import (
	"bytes"
	"context"
	"flag"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kurz-dev/kurz/internal/manager"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestDeployManifestsAreAccepted renders config/default as `make deploy` does
// and has kube-apiserver validate every object with a server-side dry run.
func TestDeployManifestsAreAccepted(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	rendered := kustomize(t, "default")
	objs := decodeAll(t, bytes.NewReader(rendered))
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	g.Expect(kinds).To(HaveKeyWithValue("CustomResourceDefinition", 3))
	g.Expect(kinds).To(HaveKeyWithValue("Deployment", 1))
	g.Expect(kinds).To(HaveKeyWithValue("PodDisruptionBudget", 1))
	g.Expect(kinds).To(HaveKey("ClusterRole"))
	g.Expect(kinds).To(HaveKey("Service"))

	// A dry run does not create the namespace the other objects live in.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kurz-system"}}
	if err := k8s.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	kubectl, err := admin.Kubectl()
	g.Expect(err).NotTo(HaveOccurred())
	apply := exec.Command(kubectl.Path, append(kubectl.Opts,
		"apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", "-")...)
	apply.Stdin = bytes.NewReader(rendered)
	out, err := apply.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	for _, o := range objs {
		accepted := `(?m)^` + strings.ToLower(o.GetKind()) + `(\.[a-z0-9.]+)?/` + regexp.QuoteMeta(o.GetName()) + ` serverside-applied \(server dry run\)$`
		g.Expect(string(out)).To(MatchRegexp(accepted), "kube-apiserver accepted %s %s", o.GetKind(), o.GetName())
	}
}

// TestDeploymentOutlivesItsShutdown checks that the pod's grace period
// covers what kurz does on SIGTERM with the Deployment's flags: serve for
// the shutdown delay, drain the redirect server, flush clicks.
func TestDeploymentOutlivesItsShutdown(t *testing.T) {
	g := NewWithT(t)
	var dep appsv1.Deployment
	found := false
	for _, o := range decodeAll(t, bytes.NewReader(kustomize(t, "default"))) {
		if o.GetKind() == "Deployment" {
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &dep)).To(Succeed())
			found = true
		}
	}
	g.Expect(found).To(BeTrue())
	c := dep.Spec.Template.Spec.Containers[0]
	g.Expect(c.Args).NotTo(BeEmpty())
	g.Expect(c.Args[0]).To(Equal("manager"))

	// Every flag parses and validates, with $(VAR) expanded as the
	// kubelet does.
	o := manager.DefaultOptions()
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	o.BindFlags(fs)
	g.Expect(fs.Parse(expandVars(c.Args[1:], c.Env))).To(Succeed())
	g.Expect(o.Validate()).To(Succeed())
	g.Expect(o.ShutdownDelay).To(BeNumerically(">", 0), "a rollout needs time for endpoints to drop the pod")

	shutdown := o.ShutdownDelay + 2*o.Redirect.ShutdownTimeout
	grace := time.Duration(*dep.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
	g.Expect(grace).To(BeNumerically(">", shutdown), "terminationGracePeriodSeconds %s must exceed delay+drain+flush %s", grace, shutdown)

	g.Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"))
	g.Expect(c.LivenessProbe.HTTPGet.Path).To(Equal("/healthz"))
	// The readiness probe notices the shutdown within the delay.
	noticed := time.Duration(c.ReadinessProbe.PeriodSeconds*c.ReadinessProbe.FailureThreshold) * time.Second
	g.Expect(noticed).To(BeNumerically("<=", o.ShutdownDelay))
}
