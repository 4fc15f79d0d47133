package config_test

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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

	// The spool's bound is its volume's sizeLimit, one number: the flag
	// names a variable that kustomize sets from the volume.
	g.Expect(c.Args).To(ContainElement("--click-spool-size-limit=$(KURZ_CLICK_SPOOL_SIZE_LIMIT)"))
	var limit string
	for _, e := range c.Env {
		if e.Name == "KURZ_CLICK_SPOOL_SIZE_LIMIT" {
			limit = e.Value
		}
	}
	var sizeLimit *resource.Quantity
	for _, v := range d.Spec.Template.Spec.Volumes {
		for _, m := range c.VolumeMounts {
			if v.EmptyDir != nil && v.Name == m.Name && filepath.Dir(spool) == filepath.Clean(m.MountPath) {
				sizeLimit = v.EmptyDir.SizeLimit
			}
		}
	}
	g.Expect(sizeLimit).NotTo(BeNil(), "the spool's emptyDir has a sizeLimit")
	g.Expect(limit).To(Equal(sizeLimit.String()), "--click-spool-size-limit is the emptyDir's sizeLimit")
}

// expandVars replaces $(NAME) in args by the value of the container's env
// NAME, as the kubelet does ($$ is a literal $; an unknown name stays).
func expandVars(args []string, env []corev1.EnvVar) []string {
	values := map[string]string{}
	for _, e := range env {
		if e.ValueFrom == nil {
			values[e.Name] = e.Value
		}
	}
	ref := regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = ref.ReplaceAllStringFunc(a, func(m string) string {
			if m == "$$" {
				return "$"
			}
			if v, ok := values[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	return out
}
