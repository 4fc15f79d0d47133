package restapi

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

// domainView is the contract's domain object, and kurz's additions after
// updated_at (see domain_state.go).
type domainView struct {
	ID          string  `json:"id"`
	WorkspaceID string  `json:"workspace_id"`
	Domain      string  `json:"domain"`
	Status      string  `json:"status"`
	NotFoundURL *string `json:"not_found_url"`
	ExpiredURL  *string `json:"expired_url"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`

	StatusReason  *string        `json:"status_reason"`
	DNSRecord     *dnsRecordView `json:"dns_record"`
	LastCheckedAt *string        `json:"last_checked_at"`
	HTTPS         *httpsView     `json:"https"`
}

func newDomainView(d *kurzv1alpha1.Domain, workspaceID string) domainView {
	status := strings.ToLower(string(kurzv1alpha1.DomainPending))
	// Active only when the controller found this very spec (its Ready
	// condition is for the current generation) proven and owning its
	// hostname: a renamed Domain is pending until its new hostname is.
	if c := d.Status.Claim; d.Status.Phase == kurzv1alpha1.DomainActive && c != nil && c.Hostname == string(d.Spec.Domain) && readyNow(d) {
		status = strings.ToLower(string(kurzv1alpha1.DomainActive))
	}
	v := domainView{
		ID:          string(d.UID),
		WorkspaceID: workspaceID,
		Domain:      string(d.Spec.Domain),
		Status:      status,
		NotFoundURL: urlString(d.Spec.NotFoundURL),
		ExpiredURL:  urlString(d.Spec.ExpiredURL),
		CreatedAt:   timestamps.Print(d.Status.CreatedAt, d.CreationTimestamp),
		UpdatedAt:   timestamps.Print(d.Status.UpdatedAt, d.CreationTimestamp),
	}
	setDomainState(&v, d)
	return v
}

// readyNow reports whether d's Ready condition is True for its generation.
func readyNow(d *kurzv1alpha1.Domain) bool {
	c := meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == d.Generation
}
