package config_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestDeploymentSpoolsClicks: the container's root filesystem is read-only,
// so --click-spool must point into a mounted emptyDir, or a replica stopped
// during an outage could not keep its clicks.
func TestDeploymentSpoolsClicks(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	var d *appsv1.Deployment
	for _, o := range decodeAll(t, bytes.NewReader(kustomize(t, "default"))) {
		if o.GetKind() == "Deployment" {
			d = &appsv1.Deployment{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d)).To(Succeed())
		}
	}
	g.Expect(d).NotTo(BeNil())
	c := d.Spec.Template.Spec.Containers[0]
	spool := ""
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--click-spool="); ok {
			spool = v
		}
	}
	g.Expect(spool).NotTo(BeEmpty(), "--click-spool is set")
	emptyDirs := map[string]bool{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		emptyDirs[v.Name] = v.EmptyDir != nil
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		if emptyDirs[m.Name] && !m.ReadOnly && filepath.Dir(spool) == filepath.Clean(m.MountPath) {
			mounted = true
		}
	}
	g.Expect(mounted).To(BeTrue(), "the spool's directory is a writable emptyDir mount")
	g.Expect(c.Env).To(ContainElement(HaveField("Name", "POD_NAME")))
}
