package routing

import (
	"encoding/pem"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

func TestEvaluateTLS(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	valid := now.Add(30 * 24 * time.Hour)
	secret := func(pemData []byte) *corev1.Secret {
		return &corev1.Secret{Data: map[string][]byte{corev1.TLSCertKey: pemData}}
	}
	ready := &Certificate{Name: "c", Ready: &metav1.Condition{Status: metav1.ConditionTrue}}
	failing := &Certificate{Name: "c", Ready: &metav1.Condition{Status: metav1.ConditionFalse, Reason: "Failed", Message: "order failed"}}

	for _, tc := range []struct {
		name     string
		in       TLSInput
		status   metav1.ConditionStatus
		reason   string
		notAfter *time.Time
	}{
		{"no Ingress", TLSInput{Routed: false, Secret: secret(certPEM(t, "go.example.com", now.Add(-time.Hour), valid))},
			metav1.ConditionFalse, kurzv1alpha1.ReasonRoutePending, nil},
		{"Ingress name taken", TLSInput{Routed: false, Blocked: "Ingress x is not kurz's"},
			metav1.ConditionFalse, kurzv1alpha1.ReasonRoutePending, nil},
		{"Certificate not Ready", TLSInput{Routed: true, Certificate: failing, Secret: secret(certPEM(t, "go.example.com", now.Add(-time.Hour), valid))},
			metav1.ConditionFalse, kurzv1alpha1.ReasonCertificateNotReady, nil},
		{"Certificate with no condition yet", TLSInput{Routed: true, Certificate: &Certificate{Name: "c"}},
			metav1.ConditionFalse, kurzv1alpha1.ReasonCertificateNotReady, nil},
		{"no Secret", TLSInput{Routed: true}, metav1.ConditionFalse, kurzv1alpha1.ReasonSecretMissing, nil},
		{"Secret without tls.crt", TLSInput{Routed: true, Secret: &corev1.Secret{}}, metav1.ConditionFalse, kurzv1alpha1.ReasonSecretMissing, nil},
		{"not PEM", TLSInput{Routed: true, Secret: secret([]byte("garbage"))}, metav1.ConditionFalse, kurzv1alpha1.ReasonCertificateInvalid, nil},
		{"another hostname", TLSInput{Routed: true, Secret: secret(certPEM(t, "other.example.com", now.Add(-time.Hour), valid))},
			metav1.ConditionFalse, kurzv1alpha1.ReasonCertificateInvalid, nil},
		{"expired", TLSInput{Routed: true, Secret: secret(certPEM(t, "go.example.com", now.Add(-48*time.Hour), now.Add(-time.Hour)))},
			metav1.ConditionFalse, kurzv1alpha1.ReasonCertificateInvalid, ptrTime(now.Add(-time.Hour))},
		{"not yet valid", TLSInput{Routed: true, Secret: secret(certPEM(t, "go.example.com", now.Add(time.Hour), valid))},
			metav1.ConditionFalse, kurzv1alpha1.ReasonCertificateInvalid, &valid},
		{"valid, not managed by cert-manager", TLSInput{Routed: true, Secret: secret(certPEM(t, "go.example.com", now.Add(-time.Hour), valid))},
			metav1.ConditionTrue, kurzv1alpha1.ReasonCertificateValid, &valid},
		{"valid, Certificate Ready", TLSInput{Routed: true, Certificate: ready, Secret: secret(certPEM(t, "*.example.com", now.Add(-time.Hour), valid))},
			metav1.ConditionTrue, kurzv1alpha1.ReasonCertificateValid, &valid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tc.in.Host, tc.in.Now = "go.example.com", now
			st := EvaluateTLS(tc.in)
			g.Expect(st.Status).To(Equal(tc.status))
			g.Expect(st.Reason).To(Equal(tc.reason))
			g.Expect(st.Message).NotTo(BeEmpty())
			g.Expect(st.Message).NotTo(ContainSubstring("BEGIN"))
			if tc.notAfter == nil {
				g.Expect(st.NotAfter).To(BeNil())
			} else {
				g.Expect(st.NotAfter).NotTo(BeNil())
				g.Expect(*st.NotAfter).To(BeTemporally("==", *tc.notAfter))
			}
		})
	}
}

func TestCertificateFrom(t *testing.T) {
	g := NewWithT(t)
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "kurz-tls-go.example.com"},
		"spec":     map[string]any{"secretName": "kurz-tls-go.example.com"},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Issuing", "status": "True"},
			map[string]any{"type": "Ready", "status": "False", "reason": "DoesNotExist", "message": "Issuing certificate"},
		}},
	}}
	c := CertificateFrom(u)
	g.Expect(c.Name).To(Equal("kurz-tls-go.example.com"))
	g.Expect(c.SecretName).To(Equal("kurz-tls-go.example.com"))
	g.Expect(c.Ready).To(Equal(&metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "DoesNotExist", Message: "Issuing certificate"}))
}

func ptrTime(t time.Time) *time.Time { return &t }

// certPEM is a self-signed certificate for dnsName, valid between the two
// times, as PEM, with an unrelated block before it as some issuers write.
func certPEM(t *testing.T, dnsName string, notBefore, notAfter time.Time) []byte {
	t.Helper()
	cert, _ := testenv.SelfSignedCert(t, dnsName, notBefore, notAfter)
	return append(pem.EncodeToMemory(&pem.Block{Type: "COMMENT", Bytes: []byte("x")}), cert...)
}
