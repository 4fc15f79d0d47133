package config_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestServiceMonitorIsAccepted installs the Prometheus Operator's
// ServiceMonitor CRD (vendored in config/prometheus/testdata), has
// kube-apiserver dry-run apply config/prometheus, and checks that the
// monitor selects exactly config/default's metrics Service, by a port that
// Service has, over HTTPS with the scraper's own token.
func TestServiceMonitorIsAccepted(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
		Paths:              []string{filepath.Join(testenv.RepoRoot(), "config", "prometheus", "testdata")},
		ErrorIfPathMissing: true,
	})
	g.Expect(err).NotTo(HaveOccurred())
	kubectl, err := admin.Kubectl()
	g.Expect(err).NotTo(HaveOccurred())

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kurz-system"}}
	if err := k8s.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	apply := exec.Command(kubectl.Path, append(kubectl.Opts,
		"apply", "--server-side", "--dry-run=server", "-o", "json", "-f", "-")...)
	apply.Stdin = bytes.NewReader(kustomize(t, "prometheus"))
	var stderr bytes.Buffer
	apply.Stderr = &stderr
	out, err := apply.Output()
	g.Expect(err).NotTo(HaveOccurred(), stderr.String())
	var monitor unstructured.Unstructured
	g.Expect(json.Unmarshal(out, &monitor.Object)).To(Succeed())
	g.Expect(monitor.GetKind()).To(Equal("ServiceMonitor"))

	var spec struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port, Scheme, Path, BearerTokenFile string
			TLSConfig                           map[string]any `json:"tlsConfig"`
		} `json:"endpoints"`
	}
	b, err := json.Marshal(monitor.Object["spec"])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(json.Unmarshal(b, &spec)).To(Succeed())
	g.Expect(spec.Endpoints).To(HaveLen(1))
	ep := spec.Endpoints[0]
	g.Expect(ep.Scheme).To(Equal("https"))
	g.Expect(ep.Path).To(Equal("/metrics"))
	g.Expect(ep.BearerTokenFile).To(Equal("/var/run/secrets/kubernetes.io/serviceaccount/token"))
	g.Expect(ep.TLSConfig).NotTo(BeEmpty())

	selector, err := metav1.LabelSelectorAsSelector(&spec.Selector)
	g.Expect(err).NotTo(HaveOccurred())
	var selected []string
	for _, o := range decodeAll(t, bytes.NewReader(kustomize(t, "default"))) {
		if o.GetKind() != "Service" || !selector.Matches(labels.Set(o.GetLabels())) {
			continue
		}
		selected = append(selected, o.GetName())
		var svc corev1.Service
		g.Expect(runtimeConvert(o, &svc)).To(Succeed())
		g.Expect(svc.Spec.Ports).To(ContainElement(HaveField("Name", ep.Port)), "the monitor's port is on the Service")
		g.Expect(svc.Spec.Ports[0].TargetPort.String()).To(Equal("metrics"))
	}
	g.Expect(selected).To(Equal([]string{"kurz-metrics"}))
}

func runtimeConvert(u *unstructured.Unstructured, into any) error {
	b, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}
