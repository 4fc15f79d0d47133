package routing

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// CertificateGVK is cert-manager's Certificate. kurz does not import
// cert-manager: it reads the few fields it needs from unstructured objects,
// and only when the CRD is installed.
var CertificateGVK = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}

// Certificate is what TLSReady reads from a cert-manager Certificate.
type Certificate struct {
	Name string
	// SecretName is spec.secretName.
	SecretName string
	// Ready is its Ready condition; nil while cert-manager has set none.
	Ready *metav1.Condition
}

// CertificateFrom reads a Certificate from its unstructured form.
func CertificateFrom(u *unstructured.Unstructured) Certificate {
	c := Certificate{Name: u.GetName()}
	c.SecretName, _, _ = unstructured.NestedString(u.Object, "spec", "secretName")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conds {
		m, ok := raw.(map[string]any)
		if !ok || m["type"] != "Ready" {
			continue
		}
		cond := &metav1.Condition{Type: "Ready"}
		cond.Status = metav1.ConditionStatus(stringField(m, "status"))
		cond.Reason = stringField(m, "reason")
		cond.Message = stringField(m, "message")
		c.Ready = cond
	}
	return c
}

func stringField(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// TLSInput is what is known about HTTPS for one hostname.
type TLSInput struct {
	Host string
	// Route names what routes the hostname: "Ingress", or "Gateway
	// listener" (the HTTPS listener of a Gateway or ListenerSet).
	Route string
	// Routed: the Route exists.
	Routed bool
	// Blocked, when not Routed, says why (an object kurz does not own has
	// the name of its Ingress or HTTPRoute; the listener is not there yet).
	Blocked string
	// Certificate is cert-manager's Certificate for the hostname's Secret;
	// nil when cert-manager does not manage it (its CRDs are not
	// installed, or no Certificate names the Secret).
	Certificate *Certificate
	// Secret is the hostname's Secret; nil when it does not exist.
	Secret *corev1.Secret
	Now    time.Time
}

// TLSState is the TLSReady condition's status, reason and message, and the
// certificate's expiry when the Secret holds one for the hostname.
type TLSState struct {
	Status   metav1.ConditionStatus
	Reason   string
	Message  string
	NotAfter *time.Time
}

// EvaluateTLS decides TLSReady. The checks run in order: the route, the
// Certificate (when cert-manager manages one), the Secret, and the
// certificate in it (covers the hostname, not expired). Messages name
// objects and dates, never key material.
func EvaluateTLS(in TLSInput) TLSState {
	secretName := SecretName(in.Host)
	if !in.Routed && in.Blocked != "" {
		return TLSState{Status: metav1.ConditionFalse, Reason: kurzv1alpha1.ReasonRoutePending, Message: in.Blocked}
	}
	if !in.Routed {
		return TLSState{Status: metav1.ConditionFalse, Reason: kurzv1alpha1.ReasonRoutePending,
			Message: fmt.Sprintf("No %s routes %s yet: it is created once the Domain holds the hostname and is Active", in.Route, in.Host)}
	}
	if c := in.Certificate; c != nil && (c.Ready == nil || c.Ready.Status != metav1.ConditionTrue) {
		msg := fmt.Sprintf("cert-manager Certificate %s is not Ready yet", c.Name)
		if c.Ready != nil && c.Ready.Message != "" {
			msg = fmt.Sprintf("cert-manager Certificate %s is not Ready (%s): %s", c.Name, c.Ready.Reason, c.Ready.Message)
		}
		return TLSState{Status: metav1.ConditionFalse, Reason: kurzv1alpha1.ReasonCertificateNotReady, Message: msg}
	}
	var pemData []byte
	if in.Secret != nil {
		pemData = in.Secret.Data[corev1.TLSCertKey]
	}
	if len(pemData) == 0 {
		return TLSState{Status: metav1.ConditionFalse, Reason: kurzv1alpha1.ReasonSecretMissing,
			Message: fmt.Sprintf("Secret %s holds no certificate yet (issued by cert-manager when an issuer annotation is set, or created by hand)", secretName)}
	}
	leaf, err := leafCertificate(pemData)
	if err != nil {
		return TLSState{Status: metav1.ConditionFalse, Reason: kurzv1alpha1.ReasonCertificateInvalid,
			Message: fmt.Sprintf("Secret %s: %s is not a PEM certificate", secretName, corev1.TLSCertKey)}
	}
	if err := leaf.VerifyHostname(in.Host); err != nil {
		return TLSState{Status: metav1.ConditionFalse, Reason: kurzv1alpha1.ReasonCertificateInvalid,
			Message: fmt.Sprintf("The certificate in Secret %s does not cover %s", secretName, in.Host)}
	}
	notAfter := leaf.NotAfter
	switch {
	case !in.Now.Before(notAfter):
		return TLSState{Status: metav1.ConditionFalse, Reason: kurzv1alpha1.ReasonCertificateInvalid, NotAfter: &notAfter,
			Message: fmt.Sprintf("The certificate in Secret %s expired at %s", secretName, notAfter.UTC().Format(time.RFC3339))}
	case in.Now.Before(leaf.NotBefore):
		return TLSState{Status: metav1.ConditionFalse, Reason: kurzv1alpha1.ReasonCertificateInvalid, NotAfter: &notAfter,
			Message: fmt.Sprintf("The certificate in Secret %s is not valid before %s", secretName, leaf.NotBefore.UTC().Format(time.RFC3339))}
	}
	return TLSState{Status: metav1.ConditionTrue, Reason: kurzv1alpha1.ReasonCertificateValid, NotAfter: &notAfter,
		Message: fmt.Sprintf("Secret %s holds a certificate for %s valid until %s", secretName, in.Host, notAfter.UTC().Format(time.RFC3339))}
}

// leafCertificate is the first certificate of a PEM chain: the server's.
func leafCertificate(data []byte) (*x509.Certificate, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("no certificate")
		}
		if block.Type == "CERTIFICATE" {
			return x509.ParseCertificate(block.Bytes)
		}
	}
}
