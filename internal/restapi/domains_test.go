package restapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
)

func TestDomainLifecycle(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)
	host := uniqueHost()

	r := w.editor.do("POST", "/api/v1/domains", map[string]any{
		"domain": "  " + strings.ToUpper(host) + ".  ", "not_found_url": "https://example.com/404",
	})
	g.Expect(r.status).To(Equal(http.StatusCreated), "%s", r)
	d := r.body
	id := d["id"].(string)
	g.Expect(d).To(HaveKeyWithValue("domain", host))
	g.Expect(d).To(HaveKeyWithValue("status", "pending"))
	g.Expect(d).To(HaveKeyWithValue("workspace_id", w.uid))
	g.Expect(d).To(HaveKeyWithValue("not_found_url", "https://example.com/404"))
	g.Expect(d).To(HaveKeyWithValue("expired_url", BeNil()))
	g.Expect(d["created_at"]).To(MatchRegexp(microTimestamp.String()))
	g.Expect(d).To(HaveLen(12), "the contract's fields, status_reason, dns_record, last_checked_at and https")

	// Named after its hostname, for kubectl users.
	var obj kurzv1alpha1.Domain
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: w.ns, Name: host}, &obj)).To(Succeed())
	g.Expect(string(obj.UID)).To(Equal(id))

	// status follows status.phase for the hostname the Domain controller
	// verified and claimed (the controller is not running here).
	obj.Status.Phase = kurzv1alpha1.DomainActive
	obj.Status.Claim = &kurzv1alpha1.DomainClaim{Hostname: host, Since: metav1.NowMicro()}
	obj.Status.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: kurzv1alpha1.ReasonVerified, Message: "test", ObservedGeneration: obj.Generation, LastTransitionTime: metav1.Now()}}
	g.Expect(k8s.Status().Update(context.Background(), &obj)).To(Succeed())
	g.Eventually(func() any {
		return w.editor.do("GET", "/api/v1/domains", nil).body["data"].([]any)[0].(map[string]any)["status"]
	}, "20s").Should(Equal("active"))

	// An update that keeps the hostname answers active, as the contract
	// shows; a younger Domain of another workspace claiming the same
	// hostname (applied with kubectl) does not lock the owner out.
	squatter := newWorkspace(t)
	squat := &kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{Namespace: squatter.ns, Name: "squat"},
		Spec:       kurzv1alpha1.DomainSpec{Domain: kurzv1alpha1.Hostname(host)},
	}
	g.Expect(k8s.Create(context.Background(), squat)).To(Succeed())
	g.Eventually(func() any {
		return squatter.editor.do("GET", "/api/v1/domains", nil).body["meta"]
	}, "20s").Should(HaveKeyWithValue("total", BeNumerically("==", 1)), "the API's cache holds the younger claim")
	r = w.editor.do("PUT", "/api/v1/domains/"+id, map[string]any{"domain": host, "not_found_url": "https://example.com/404"})
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	g.Expect(r.body).To(HaveKeyWithValue("status", "active"))

	// Update: domain replaced, absent URL kept, null URL cleared, present set.
	host2 := uniqueHost()
	r = w.editor.do("PUT", "/api/v1/domains/"+id, map[string]any{"domain": host2, "expired_url": "https://example.com/gone"})
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	g.Expect(r.body).To(HaveKeyWithValue("domain", host2))
	g.Expect(r.body).To(HaveKeyWithValue("status", "pending"), "a new hostname is not verified yet")
	g.Expect(r.body).To(HaveKeyWithValue("not_found_url", "https://example.com/404"))
	g.Expect(r.body).To(HaveKeyWithValue("expired_url", "https://example.com/gone"))
	g.Expect(r.body).To(HaveKeyWithValue("created_at", d["created_at"]))
	g.Expect(r.body["updated_at"].(string) >= d["updated_at"].(string)).To(BeTrue())
	r = w.editor.do("PUT", "/api/v1/domains/"+id, map[string]any{"domain": host2, "not_found_url": nil})
	g.Expect(r.body).To(HaveKeyWithValue("not_found_url", BeNil()))
	g.Expect(r.body).To(HaveKeyWithValue("expired_url", "https://example.com/gone"))

	// Once the other claim is gone too, the old hostname is free again; its
	// object name is not, so the next Domain for it gets a generated name.
	g.Expect(k8s.Delete(context.Background(), squat)).To(Succeed())
	g.Eventually(func() int {
		r = w.editor.do("POST", "/api/v1/domains", map[string]any{"domain": host})
		return r.status
	}, "20s").Should(Equal(http.StatusCreated))
	g.Expect(w.editor.do("GET", "/api/v1/domains", nil).body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 2)))

	del := w.editor.do("DELETE", "/api/v1/domains/"+id, nil)
	g.Expect(del.status).To(Equal(http.StatusOK))
	g.Expect(del.body).To(Equal(map[string]any{"message": "Domain deleted successfully."}))
	g.Expect(w.editor.do("DELETE", "/api/v1/domains/"+id, nil).status).To(Equal(http.StatusNotFound))
	g.Expect(w.editor.do("GET", "/api/v1/domains", nil).body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 1)))
}

func TestDomainValidation(t *testing.T) {
	testenv.Need(t)
	w, other := newWorkspace(t), newWorkspace(t)
	taken := uniqueHost()
	other.createDomain(t, taken)
	mine := uniqueHost()
	mineID := w.createDomain(t, mine)
	other2 := uniqueHost()
	w.createDomain(t, other2)

	tests := []struct {
		name    string
		method  string
		path    string
		body    any
		field   string
		message string
	}{
		{"missing", "POST", "/api/v1/domains", map[string]any{}, "domain", "The domain field is required."},
		{"not a string", "POST", "/api/v1/domains", map[string]any{"domain": 5}, "domain", "The domain field must be a string."},
		{"with a port", "POST", "/api/v1/domains", map[string]any{"domain": "example.com:80"}, "domain", "The domain field must be a valid domain name."},
		{"a URL", "POST", "/api/v1/domains", map[string]any{"domain": "https://example.com/"}, "domain", "The domain field must be a valid domain name."},
		{"taken by this workspace", "POST", "/api/v1/domains", map[string]any{"domain": strings.ToUpper(mine)}, "domain", "The domain has already been taken."},
		{"bad not_found_url", "POST", "/api/v1/domains", map[string]any{"domain": uniqueHost(), "not_found_url": "javascript:x"}, "not_found_url", "The not found url field must be an absolute http or https URL with a host."},
		{"bad expired_url", "POST", "/api/v1/domains", map[string]any{"domain": uniqueHost(), "expired_url": 7}, "expired_url", "The expired url field must be a string."},
		{"update to one this workspace has", "PUT", "/api/v1/domains/" + mineID, map[string]any{"domain": other2}, "domain", "The domain has already been taken."},
		{"update without domain", "PUT", "/api/v1/domains/" + mineID, map[string]any{"not_found_url": "https://e.com"}, "domain", "The domain field is required."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			w.editor.t = t
			r := w.editor.do(tt.method, tt.path, tt.body)
			expectFieldError(g, r, tt.field, tt.message)
		})
	}

	t.Run("international names are stored in punycode", func(t *testing.T) {
		g := NewWithT(t)
		w.editor.t = t
		label := strings.TrimSuffix(uniqueHost(), ".example.com")
		r := w.editor.do("POST", "/api/v1/domains", map[string]any{"domain": "Bücher-" + label + ".example"})
		g.Expect(r.status).To(Equal(http.StatusCreated), "%s", r)
		g.Expect(r.body["domain"]).To(HavePrefix("xn--bcher-"))
		// Keeping its own hostname on update is no conflict.
		r = w.editor.do("PUT", "/api/v1/domains/"+mineID, map[string]any{"domain": mine})
		g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	})
}

// TestDomainOfAnotherWorkspaceIsCreatedPending: the API no longer refuses a
// hostname another workspace claims (a squatter's early claim would lock
// the real owner out). It creates the Domain pending, its claim contested,
// and its status names the TXT record that moves the hostname to it; the
// other workspace keeps the hostname meanwhile.
func TestDomainOfAnotherWorkspaceIsCreatedPending(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	holder, buyer := newWorkspace(t), newWorkspace(t)
	taken := uniqueHost()
	holder.createDomain(t, taken)

	r := buyer.editor.do("POST", "/api/v1/domains", map[string]any{"domain": taken})
	g.Expect(r.status).To(Equal(http.StatusCreated), "%s", r)
	g.Expect(r.body).To(HaveKeyWithValue("status", "pending"))
	var obj kurzv1alpha1.Domain
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: buyer.ns, Name: taken}, &obj)).To(Succeed())
	g.Expect(obj.Status.Claim).NotTo(BeNil())
	g.Expect(obj.Status.Claim.Contested).To(BeTrue())
	g.Expect(obj.Status.Record).To(Equal(&kurzv1alpha1.DNSRecord{
		Name: "_kurz-challenge." + taken, Type: "TXT", Value: claims.ChallengeValue(types.UID(buyer.uid), taken),
	}))
	var held kurzv1alpha1.Domain
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: holder.ns, Name: taken}, &held)).To(Succeed())
	g.Expect(held.Status.Claim.Contested).To(BeFalse())
	g.Expect(held.Status.Record.Value).NotTo(Equal(obj.Status.Record.Value), "the value is the workspace's own")

	// The holder keeps the hostname: links go there, not to the buyer.
	r = buyer.editor.do("POST", "/api/v1/links", map[string]any{"url": "https://example.com/", "domain": taken, "key": "k"})
	expectFieldError(g, r, "domain", "The selected domain is invalid.")
	holder.createLink(t, map[string]any{"url": "https://example.com/", "domain": taken, "key": "k"})

	// A rename to another workspace's hostname is a contested claim too.
	moved := uniqueHost()
	id := buyer.createDomain(t, moved)
	r = buyer.editor.do("PUT", "/api/v1/domains/"+id, map[string]any{"domain": taken})
	g.Expect(r.status).To(Equal(http.StatusUnprocessableEntity), "one Domain per hostname and workspace: %s", r)
	other := uniqueHost()
	holder.createDomain(t, other)
	r = buyer.editor.do("PUT", "/api/v1/domains/"+id, map[string]any{"domain": other})
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	g.Expect(r.body).To(HaveKeyWithValue("status", "pending"))
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: buyer.ns, Name: moved}, &obj)).To(Succeed())
	g.Expect(obj.Status.Claim.Hostname).To(Equal(other))
	g.Expect(obj.Status.Claim.Contested).To(BeTrue())
	g.Expect(obj.Status.Record.Value).To(Equal(claims.ChallengeValue(types.UID(buyer.uid), other)))
}
