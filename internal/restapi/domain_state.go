package restapi

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

// dnsRecordView is the record a pending domain's owner publishes: the TXT
// record that proves the hostname (status.record). Not a secret: it is
// meant for public DNS.
type dnsRecordView struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

// httpsView is where HTTPS for the hostname stands (the TLSReady condition
// and status.tls), answered only when kurz manages routing.
type httpsView struct {
	State                string  `json:"state"`
	Message              *string `json:"message"`
	CertificateExpiresAt *string `json:"certificate_expires_at"`
}

// httpsStates names the TLSReady reasons in the API's words; a reason not
// listed (a newer kurz's) reads as pending.
var httpsStates = map[string]string{
	kurzv1alpha1.ReasonCertificateValid:    "ready",
	kurzv1alpha1.ReasonRoutePending:        "route_pending",
	kurzv1alpha1.ReasonCertificateNotReady: "certificate_pending",
	kurzv1alpha1.ReasonSecretMissing:       "certificate_missing",
	kurzv1alpha1.ReasonCertificateInvalid:  "certificate_invalid",
}

// setDomainState fills kurz's additions to the domain object from d's
// status: what the controller last said and found, so a person without
// kubectl can see why a domain is pending and what to publish.
func setDomainState(v *domainView, d *kurzv1alpha1.Domain) {
	if c := meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionReady); c != nil && c.Message != "" {
		v.StatusReason = ptrTo(c.Message)
	}
	if r := d.Status.Record; r != nil {
		v.DNSRecord = &dnsRecordView{Name: r.Name, Type: r.Type, Value: r.Value}
	}
	v.LastCheckedAt = printTime(d.Status.LastCheckTime)
	tls := meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionTLSReady)
	if tls == nil && d.Status.TLS == nil {
		return // kurz does not manage this hostname's routing
	}
	h := &httpsView{State: "pending"}
	if tls != nil {
		if st, ok := httpsStates[tls.Reason]; ok {
			h.State = st
		}
		if tls.Reason == kurzv1alpha1.ReasonCertificateValid && tls.Status != metav1.ConditionTrue {
			h.State = "pending"
		}
		if tls.Message != "" {
			h.Message = ptrTo(tls.Message)
		}
	}
	if d.Status.TLS != nil {
		h.CertificateExpiresAt = printTime(d.Status.TLS.NotAfter)
	}
	v.HTTPS = h
}

// printTime prints a whole-second status time as the API prints times.
func printTime(t *metav1.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(timestamps.Format)
	return &s
}

// ptrTo points at a copy of s, never into a cached object.
func ptrTo(s string) *string { return &s }
