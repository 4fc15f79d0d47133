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

// TestLinkState: a link answers the state its Ready condition gives (the
// controller is not running here; the test writes the status it would),
// and pending before there is one; the state filter and the field agree.
func TestLinkState(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	w, host := newWorkspaceWithDomain(t)
	l := w.createLink(t, map[string]any{"domain": host, "key": "st", "url": "https://example.com/"})
	g.Expect(l).To(HaveKeyWithValue("state", "pending"))
	g.Expect(l).To(HaveKeyWithValue("state_reason", BeNil()))

	var list kurzv1alpha1.LinkList
	g.Expect(k8s.List(ctx, &list, client.InNamespace(w.ns))).To(Succeed())
	g.Expect(list.Items).To(HaveLen(1))
	obj := &list.Items[0]
	orig := obj.DeepCopy()
	obj.Status.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: kurzv1alpha1.ReasonExpired, Message: "The link expired at 2026-01-01T00:00:00Z", LastTransitionTime: metav1.Now()}}
	g.Expect(k8s.Status().Patch(ctx, obj, client.MergeFrom(orig))).To(Succeed())

	g.Eventually(func() map[string]any {
		return w.viewer.do("GET", "/api/v1/links/"+l["id"].(string), nil).body
	}, "20s").Should(And(HaveKeyWithValue("state", "expired"),
		HaveKeyWithValue("state_reason", "The link expired at 2026-01-01T00:00:00Z")))
	r := w.viewer.do("GET", "/api/v1/links?state=expired", nil)
	g.Expect(r.body["data"]).To(ConsistOf(HaveKeyWithValue("state", "expired")), "%s", r)
	r = w.viewer.do("GET", "/api/v1/links?state=active", nil)
	g.Expect(r.body["data"]).To(BeEmpty(), "%s", r)
}

// TestDomainState: a new domain has its record but none of the
// controller's findings; once
// status holds the record, the check time and HTTPS state, the API answers
// them in its own words.
func TestDomainState(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorkspace(t)
	host := uniqueHost()
	r := w.editor.do("POST", "/api/v1/domains", map[string]any{"domain": host})
	g.Expect(r.status).To(Equal(http.StatusCreated), "%s", r)
	for _, field := range []string{"status_reason", "last_checked_at", "https"} {
		g.Expect(r.body).To(HaveKeyWithValue(field, BeNil()), field)
	}
	// The record to publish is known from the start (the API writes it
	// with the Domain), so a person can publish it at once.
	g.Expect(r.body["dns_record"]).To(And(HaveKeyWithValue("name", "_kurz-challenge."+host),
		HaveKeyWithValue("type", "TXT"), HaveKeyWithValue("value", Not(BeEmpty()))))

	var list kurzv1alpha1.DomainList
	g.Expect(k8s.List(ctx, &list, client.InNamespace(w.ns))).To(Succeed())
	g.Expect(list.Items).To(HaveLen(1))
	obj := &list.Items[0]
	orig := obj.DeepCopy()
	checked := metav1.NewTime(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	notAfter := metav1.NewTime(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	obj.Status.Record = &kurzv1alpha1.DNSRecord{Name: kurzv1alpha1.ChallengeRecordPrefix + host, Type: "TXT", Value: "kurz-verify=abc"}
	obj.Status.LastCheckTime = &checked
	obj.Status.TLS = &kurzv1alpha1.DomainTLS{Ingress: "x", SecretName: "x-tls", NotAfter: &notAfter}
	obj.Status.Conditions = []metav1.Condition{
		{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: kurzv1alpha1.ReasonVerificationPending,
			Message: "Publish the TXT record", LastTransitionTime: metav1.Now()},
		{Type: kurzv1alpha1.ConditionTLSReady, Status: metav1.ConditionFalse, Reason: kurzv1alpha1.ReasonCertificateInvalid,
			Message: "The certificate has expired", LastTransitionTime: metav1.Now()},
	}
	g.Expect(k8s.Status().Patch(ctx, obj, client.MergeFrom(orig))).To(Succeed())

	g.Eventually(func() any {
		return w.viewer.do("GET", "/api/v1/domains", nil).body["data"].([]any)[0]
	}, "20s").Should(And(
		HaveKeyWithValue("status", "pending"),
		HaveKeyWithValue("status_reason", "Publish the TXT record"),
		HaveKeyWithValue("dns_record", Equal(map[string]any{"name": "_kurz-challenge." + host, "type": "TXT", "value": "kurz-verify=abc"})),
		HaveKeyWithValue("last_checked_at", "2026-03-04T05:06:07.000000Z"),
		HaveKeyWithValue("https", Equal(map[string]any{
			"state": "certificate_invalid", "message": "The certificate has expired",
			"certificate_expires_at": "2026-06-01T00:00:00.000000Z",
		})),
	))
}

// TestMe: /api/v1/me answers the caller's workspace and exactly the verbs
// RBAC grants it, the same that the routes then allow or refuse.
func TestMe(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)

	all := map[string]any{"list": true, "get": true, "create": true, "update": true, "delete": true}
	read := map[string]any{"list": true, "get": true, "create": false, "update": false, "delete": false}
	none := map[string]any{"list": false, "get": false, "create": false, "update": false, "delete": false}

	r := w.editor.do("GET", "/api/v1/me", nil)
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	g.Expect(r.body).To(Equal(map[string]any{
		"username":     "system:serviceaccount:" + w.ns + ":editor",
		"workspace_id": w.uid, "workspace_name": w.ns,
		"can": map[string]any{"links": all, "domains": all, "webhooks": all},
	}))

	r = w.viewer.do("GET", "/api/v1/me", nil)
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	g.Expect(r.body["can"]).To(Equal(map[string]any{"links": read, "domains": read, "webhooks": read}))
	g.Expect(w.viewer.do("POST", "/api/v1/domains", map[string]any{"domain": uniqueHost()}).status).
		To(Equal(http.StatusForbidden), "what /me says no to, the route refuses")
	g.Expect(w.viewer.do("DELETE", "/api/v1/webhooks/no-such-id", nil).status).
		To(Equal(http.StatusForbidden), "webhooks too")

	// A ServiceAccount bound to nothing may still ask, and learns it may
	// do nothing.
	nobody := &apiClient{t: t, base: baseURL, token: serviceAccountToken(t, w.ns, "nobody", "", "")}
	r = nobody.do("GET", "/api/v1/me", nil)
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	g.Expect(r.body["can"]).To(Equal(map[string]any{"links": none, "domains": none, "webhooks": none}))

	anonymous := &apiClient{t: t, base: baseURL}
	g.Expect(anonymous.do("GET", "/api/v1/me", nil).status).To(Equal(http.StatusUnauthorized))
}
