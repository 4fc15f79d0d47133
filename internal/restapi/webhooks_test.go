package restapi

import (
	"context"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// webhookObject reads the Webhook with uid id from kube-apiserver.
func webhookObject(g Gomega, ns, id string) *kurzv1alpha1.Webhook {
	var list kurzv1alpha1.WebhookList
	g.Expect(k8s.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	for i := range list.Items {
		if string(list.Items[i].UID) == id {
			return &list.Items[i]
		}
	}
	g.Expect(id).To(BeEmpty(), "no Webhook %s in %s", id, ns)
	return nil
}

func TestWebhookLifecycle(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorkspace(t)

	r := w.editor.do("POST", "/api/v1/webhooks", map[string]any{
		"url": " https://hooks.example.com/kurz ", "events": []string{"link.created", "link.deleted", "link.created"},
		"secret_name": "signing",
	})
	g.Expect(r.status).To(Equal(http.StatusCreated), "%s", r)
	wh := r.body
	id := wh["id"].(string)
	g.Expect(wh).To(HaveKeyWithValue("workspace_id", w.uid))
	g.Expect(wh).To(HaveKeyWithValue("url", "https://hooks.example.com/kurz"))
	g.Expect(wh).To(HaveKeyWithValue("events", []any{"link.created", "link.deleted"}), "a set")
	g.Expect(wh).To(HaveKeyWithValue("secret_name", "signing"))
	g.Expect(wh).To(HaveKeyWithValue("secret_key", "secret"))
	g.Expect(wh).To(HaveKeyWithValue("link_selector", BeNil()))
	g.Expect(wh).To(HaveKeyWithValue("payload_version", "v1"))
	g.Expect(wh).To(HaveKeyWithValue("timeout_seconds", BeNumerically("==", 10)))
	g.Expect(wh).To(HaveKeyWithValue("max_attempts", BeNumerically("==", 8)))
	g.Expect(wh).To(HaveKeyWithValue("max_clicks_per_request", BeNumerically("==", 100)))
	g.Expect(wh).To(HaveKeyWithValue("status", "pending"), "no controller ran")
	g.Expect(wh).To(HaveKeyWithValue("last_error", BeNil()))
	g.Expect(wh["created_at"]).To(MatchRegexp(microTimestamp.String()))
	g.Expect(wh).To(HaveLen(19))

	obj := webhookObject(g, w.ns, id)
	g.Expect(obj.Spec.URL).To(Equal("https://hooks.example.com/kurz"))
	g.Expect(obj.Spec.SecretRef).To(Equal(kurzv1alpha1.WebhookSecretRef{Name: "signing", Key: "secret"}), "the CRD's default")

	// Show and list, as a viewer too.
	g.Expect(w.viewer.do("GET", "/api/v1/webhooks/"+id, nil).body).To(Equal(wh))
	list := w.viewer.do("GET", "/api/v1/webhooks", nil)
	g.Expect(list.status).To(Equal(http.StatusOK))
	g.Expect(list.body["data"]).To(Equal([]any{wh}))
	g.Expect(list.body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 1)))
	g.Expect(w.viewer.do("POST", "/api/v1/webhooks", map[string]any{"url": "https://h.example", "events": []string{"link.created"}, "secret_name": "s"}).status).
		To(Equal(http.StatusForbidden))

	// Another workspace sees nothing of it.
	other := newWorkspace(t)
	g.Expect(other.editor.do("GET", "/api/v1/webhooks/"+id, nil).status).To(Equal(http.StatusNotFound))
	g.Expect(other.editor.do("DELETE", "/api/v1/webhooks/"+id, nil).status).To(Equal(http.StatusNotFound))
	g.Expect(other.editor.do("GET", "/api/v1/webhooks", nil).body["data"]).To(BeEmpty())

	// Update: the required fields replaced, optional ones set, kept when
	// absent, back to their defaults when null.
	r = w.editor.do("PUT", "/api/v1/webhooks/"+id, map[string]any{
		"url": "https://hooks.example.com/v2", "events": []string{"link.clicked"}, "secret_name": "signing-2",
		"secret_key": "current", "timeout_seconds": 5, "max_attempts": "3", "max_clicks_per_request": 500,
		"link_selector": map[string]any{"match_labels": map[string]string{"team": "growth"}, "tags": []string{"promo", "promo"}},
	})
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	g.Expect(r.body).To(HaveKeyWithValue("url", "https://hooks.example.com/v2"))
	g.Expect(r.body).To(HaveKeyWithValue("secret_key", "current"))
	g.Expect(r.body).To(HaveKeyWithValue("timeout_seconds", BeNumerically("==", 5)))
	g.Expect(r.body).To(HaveKeyWithValue("max_attempts", BeNumerically("==", 3)))
	g.Expect(r.body).To(HaveKeyWithValue("max_clicks_per_request", BeNumerically("==", 500)))
	g.Expect(r.body["link_selector"]).To(Equal(map[string]any{
		"match_labels": map[string]any{"team": "growth"}, "match_expressions": []any{}, "tags": []any{"promo"},
	}))
	r = w.editor.do("PUT", "/api/v1/webhooks/"+id, map[string]any{
		"url": "https://hooks.example.com/v2", "events": []string{"link.clicked"}, "secret_name": "signing-2",
		"timeout_seconds": nil,
	})
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	g.Expect(r.body).To(HaveKeyWithValue("timeout_seconds", BeNumerically("==", 10)), "null: the default")
	g.Expect(r.body).To(HaveKeyWithValue("max_attempts", BeNumerically("==", 3)), "absent: kept")
	g.Expect(r.body).To(HaveKeyWithValue("secret_key", "current"))
	g.Expect(r.body["link_selector"]).NotTo(BeNil())

	// The state comes from the status the controller and the dispatchers
	// write (neither runs here).
	obj = webhookObject(g, w.ns, id)
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	obj.Status = kurzv1alpha1.WebhookStatus{
		ObservedGeneration: obj.Generation, LastDeliveryTime: &now, ConsecutiveFailures: 2, LastError: "HTTP 503 Service Unavailable",
		Conditions: []metav1.Condition{
			{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: kurzv1alpha1.ReasonDeliveryFailing, Message: "failing", ObservedGeneration: obj.Generation, LastTransitionTime: now},
			{Type: kurzv1alpha1.ConditionReconciling, Status: metav1.ConditionTrue, Reason: kurzv1alpha1.ReasonDeliveryFailing, Message: "failing", ObservedGeneration: obj.Generation, LastTransitionTime: now},
		},
	}
	g.Expect(k8s.Status().Update(ctx, obj)).To(Succeed())
	g.Eventually(func() map[string]any { return w.editor.do("GET", "/api/v1/webhooks/"+id, nil).body }, "20s").Should(And(
		HaveKeyWithValue("status", "failing"),
		HaveKeyWithValue("status_reason", kurzv1alpha1.ReasonDeliveryFailing),
		HaveKeyWithValue("consecutive_failures", BeNumerically("==", 2)),
		HaveKeyWithValue("last_error", "HTTP 503 Service Unavailable"),
		HaveKeyWithValue("last_delivery_at", now.UTC().Format("2006-01-02T15:04:05.000000Z")),
		HaveKeyWithValue("last_success_at", BeNil()),
	))

	r = w.editor.do("DELETE", "/api/v1/webhooks/"+id, nil)
	g.Expect(r.status).To(Equal(http.StatusOK))
	g.Expect(r.body).To(Equal(map[string]any{"message": "Webhook deleted successfully."}))
	g.Expect(w.editor.do("GET", "/api/v1/webhooks/"+id, nil).status).To(Equal(http.StatusNotFound))
	g.Expect(w.editor.do("GET", "/api/v1/webhooks", nil).body["data"]).To(BeEmpty())
}

func TestWebhookValidation(t *testing.T) {
	testenv.Need(t)
	w := newWorkspace(t)
	valid := func() map[string]any {
		return map[string]any{"url": "https://hooks.example.com/x", "events": []string{"link.created"}, "secret_name": "signing"}
	}
	for _, tc := range []struct {
		name, field, message string
		edit                 func(map[string]any)
	}{
		{"no url", "url", "The url field is required.", func(b map[string]any) { delete(b, "url") }},
		{"http", "url", "The url field must be https; http only for a Service of this namespace (<service>.<namespace>.svc).",
			func(b map[string]any) { b["url"] = "http://hooks.example.com/x" }},
		{"scheme", "url", "The url field must be an absolute http or https URL with a host.", func(b map[string]any) { b["url"] = "javascript:alert(1)" }},
		{"user-info", "url", "The url field must not contain user-info (user:password@).", func(b map[string]any) { b["url"] = "https://u:p@hooks.example.com/" }},
		{"fragment", "url", "The url field must not contain a fragment (#).", func(b map[string]any) { b["url"] = "https://hooks.example.com/#x" }},
		{"no events", "events", "The events field is required.", func(b map[string]any) { b["events"] = []string{} }},
		{"events type", "events", "The events field must be an array.", func(b map[string]any) { b["events"] = "link.created" }},
		{"unknown event", "events.1", "The events.1 field must be one of: link.created, link.updated, link.deleted, link.clicked, link.expired, link.conflict, domain.verified, domain.unverified, domain.tls_ready.",
			func(b map[string]any) { b["events"] = []string{"link.created", "link.visited"} }},
		{"secret name", "secret_name", "The secret name field must be a Secret's name: lowercase letters, digits, '-' and '.'.", func(b map[string]any) { b["secret_name"] = "Signing_Key" }},
		{"secret key", "secret_key", "The secret key field may contain only letters, digits, '-', '_' and '.'.", func(b map[string]any) { b["secret_key"] = "a/b" }},
		{"timeout", "timeout_seconds", "The timeout seconds field must be between 1 and 30.", func(b map[string]any) { b["timeout_seconds"] = 31 }},
		{"attempts", "max_attempts", "The max attempts field must be between 1 and 20.", func(b map[string]any) { b["max_attempts"] = 0 }},
		{"clicks per request", "max_clicks_per_request", "The max clicks per request field must be between 1 and 1000.", func(b map[string]any) { b["max_clicks_per_request"] = 1001 }},
		{"version", "payload_version", "The payload version field must be v1.", func(b map[string]any) { b["payload_version"] = "v2" }},
		{"selector", "link_selector", "The link selector field must be an object with match_labels, match_expressions and tags.", func(b map[string]any) { b["link_selector"] = []string{"x"} }},
		{"operator", "link_selector.match_expressions.0.operator", "The link selector.match expressions.0.operator field is invalid: not a valid selector operator.",
			func(b map[string]any) {
				b["link_selector"] = map[string]any{"match_expressions": []map[string]any{{"key": "tier", "operator": "Near", "values": []string{"x"}}}}
			}},
		{"tag", "link_selector.tags.0", "The link selector.tags.0 field must not be empty.", func(b map[string]any) {
			b["link_selector"] = map[string]any{"tags": []string{""}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			b := valid()
			tc.edit(b)
			expectFieldError(g, w.editor.do("POST", "/api/v1/webhooks", b), tc.field, tc.message)
		})
	}
	// Nothing was written.
	NewWithT(t).Expect(w.editor.do("GET", "/api/v1/webhooks", nil).body["data"]).To(BeEmpty())
	// A Service of the namespace over http is a valid URL (whether kurz may
	// reach it is the manager's flag, and the Webhook's status says so).
	b := valid()
	b["url"] = "http://receiver." + w.ns + ".svc:8080/hook"
	NewWithT(t).Expect(w.editor.do("POST", "/api/v1/webhooks", b).status).To(Equal(http.StatusCreated))
}
