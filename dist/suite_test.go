// Package dist_test checks the generated release artefacts, the Helm chart
// dist/chart and dist/install.yaml, against a real kube-apiserver: both are
// applied with a server-side dry run, and the objects the API server would
// store are checked for the values given.
package dist_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/kurz-dev/kurz/internal/testenv"
)

var (
	k8s client.Client
	// env is the control plane, for installing CRDs a test needs.
	env *testenv.Env
	// admin runs kubectl on the control plane: admin.Kubectl().
	admin *envtest.AuthenticatedUser
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{Admin: true}, func(e *testenv.Env) error {
		env, k8s, admin = e, e.Client, e.Admin
		return nil
	})
}

// decodeAll reads every object of a multi-document YAML stream.
func decodeAll(t *testing.T, manifests []byte) []*unstructured.Unstructured {
	t.Helper()
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifests)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := docs.Read()
		if err == io.EOF {
			return objs
		}
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		j, err := yaml.YAMLToJSON(doc)
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		if string(bytes.TrimSpace(j)) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		NewWithT(t).Expect(u.UnmarshalJSON(j)).To(Succeed(), string(doc))
		objs = append(objs, u)
	}
}

// dryRunApply has kube-apiserver validate and default every object of
// manifests with `kubectl apply --server-side --dry-run=server` into
// namespace ns (created first: a dry run creates no namespace), and returns
// the objects as the API server would store them, by kind/name.
func dryRunApply(t *testing.T, ns string, manifests []byte) map[string]*unstructured.Unstructured {
	t.Helper()
	g := NewWithT(t)
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	kubectl, err := admin.Kubectl()
	g.Expect(err).NotTo(HaveOccurred())
	apply := exec.Command(kubectl.Path, append(kubectl.Opts,
		"apply", "--server-side", "--force-conflicts", "--dry-run=server", "-o", "json", "-f", "-")...)
	apply.Stdin = bytes.NewReader(manifests)
	var stderr bytes.Buffer
	apply.Stderr = &stderr
	out, err := apply.Output()
	g.Expect(err).NotTo(HaveOccurred(), "kubectl apply --dry-run=server: %s", stderr.String())

	// One object is printed as itself, several as a List.
	var printed unstructured.Unstructured
	g.Expect(json.Unmarshal(out, &printed.Object)).To(Succeed())
	items := []unstructured.Unstructured{printed}
	if printed.IsList() {
		list, err := printed.ToList()
		g.Expect(err).NotTo(HaveOccurred())
		items = list.Items
	}
	stored := map[string]*unstructured.Unstructured{}
	for i := range items {
		stored[key(&items[i])] = &items[i]
	}
	return stored
}

func key(o *unstructured.Unstructured) string { return o.GetKind() + "/" + o.GetName() }

// managerContainer is the Deployment kurz's container, decoded.
func managerContainer(t *testing.T, dep *unstructured.Unstructured) (int32, corev1.Container) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(dep).NotTo(BeNil(), "a Deployment kurz")
	var d struct {
		Spec struct {
			Replicas int32                  `json:"replicas"`
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	j, err := dep.MarshalJSON()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(json.Unmarshal(j, &d)).To(Succeed())
	g.Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1))
	return d.Spec.Replicas, d.Spec.Template.Spec.Containers[0]
}
