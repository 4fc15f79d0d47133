package config_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// argocdDir holds the Argo CD health scripts and the argocd-cm snippet.
var argocdDir = filepath.Join(testenv.RepoRoot(), "config", "argocd")

func readArgoCDConfigMap(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(argocdDir, "argocd-cm.yaml"))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	cm := &corev1.ConfigMap{}
	NewWithT(t).Expect(yaml.UnmarshalStrict(raw, cm)).To(Succeed())
	return cm
}

// TestArgoCDSnippetEmbedsTheHealthScripts: the argocd-cm snippet carries
// each kind's health.lua word for word, under the key Argo CD looks up
// (resource.customizations.health.<group>_<kind>).
func TestArgoCDSnippetEmbedsTheHealthScripts(t *testing.T) {
	g := NewWithT(t)
	cm := readArgoCDConfigMap(t)
	g.Expect(cm.Name).To(Equal("argocd-cm"))
	for _, kind := range []string{"Link", "Domain", "Webhook"} {
		script, err := os.ReadFile(filepath.Join(argocdDir, kurzv1alpha1.GroupVersion.Group, kind, "health.lua"))
		g.Expect(err).NotTo(HaveOccurred())
		key := "resource.customizations.health." + kurzv1alpha1.GroupVersion.Group + "_" + kind
		g.Expect(cm.Data).To(HaveKey(key))
		g.Expect(cm.Data[key]).To(Equal(string(script)),
			"config/argocd/argocd-cm.yaml must embed config/argocd/kurz.dev/%s/health.lua unchanged", kind)
	}
}

// TestArgoCDIgnoresEveryClickField: the fields the redirect servers write
// on every flush are exactly those ignoreResourceUpdates names, found from
// the LinkStatus type, so renaming or adding a click field fails here.
func TestArgoCDIgnoresEveryClickField(t *testing.T) {
	g := NewWithT(t)
	cm := readArgoCDConfigMap(t)
	var ignore struct {
		JSONPointers []string `json:"jsonPointers"`
	}
	g.Expect(yaml.UnmarshalStrict([]byte(cm.Data["resource.customizations.ignoreResourceUpdates.kurz.dev_Link"]), &ignore)).To(Succeed())

	var clickFields []string
	st := reflect.TypeFor[kurzv1alpha1.LinkStatus]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if strings.Contains(strings.ToLower(name), "click") {
			clickFields = append(clickFields, "/status/"+name)
		}
	}
	g.Expect(clickFields).To(HaveLen(4), "clicks, lastClickTime, clickWriters, clickWritersPrunedThrough")
	g.Expect(ignore.JSONPointers).To(ConsistOf(clickFields))
	g.Expect(cm.Data).To(HaveKeyWithValue("resource.ignoreResourceUpdatesEnabled", "true"))
}

// TestArgoCDSnippetMergesIntoArgocdCM applies the snippet the way the
// docs/gitops.md says, to an argocd-cm that has settings of its own: they stay,
// and the scripts arrive unchanged.
func TestArgoCDSnippetMergesIntoArgocdCM(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	existing := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: ns},
		Data:       map[string]string{"url": "https://argocd.example.com", "timeout.reconciliation": "180s"},
	}
	g.Expect(k8s.Create(ctx, existing)).To(Succeed())

	kubectl(t, "-n", ns, "patch", "configmap", "argocd-cm", "--patch-file", filepath.Join(argocdDir, "argocd-cm.yaml"))

	got := &corev1.ConfigMap{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(existing), got)).To(Succeed())
	want := readArgoCDConfigMap(t)
	for k, v := range existing.Data {
		g.Expect(got.Data).To(HaveKeyWithValue(k, v))
	}
	for k, v := range want.Data {
		g.Expect(got.Data).To(HaveKeyWithValue(k, v))
	}
}
