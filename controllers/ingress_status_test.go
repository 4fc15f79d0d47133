package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/routing"
	"github.com/kurz-dev/kurz/internal/testenv"
)

func TestTLSReadyFollowsCertificateAndSecret(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv, ingressNS := startIngressControllers(t)
	ns, h := namespaceAndHost(t, "tls")
	secretName := routing.SecretName(h)

	publishTXT(t, srv, ns, h)
	d := newDomain(ns, "go", h)
	g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
	g.Eventually(tlsReadyOf(d), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonSecretMissing))

	// cert-manager's ingress-shim creates a Certificate named after the
	// Secret; it is not Ready while the order runs.
	cert := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"secretName": secretName,
			"dnsNames":   []any{h},
			"issuerRef":  map[string]any{"name": "letsencrypt", "kind": "ClusterIssuer"},
		},
	}}
	cert.SetGroupVersionKind(routing.CertificateGVK)
	cert.SetNamespace(ingressNS)
	cert.SetName(secretName)
	g.Expect(k8sClient.Create(ctx, cert)).To(Succeed())
	setCertificateReady(g, cert, "False", "DoesNotExist", "Issuing certificate as Secret does not exist")
	g.Eventually(func(g Gomega) string {
		g.Expect(tlsReadyOf(d)(g)).To(Equal("False/" + kurzv1alpha1.ReasonCertificateNotReady))
		return meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionTLSReady).Message
	}, timeout, poll).Should(ContainSubstring("Issuing certificate as Secret does not exist"))

	// The Secret is written, then the Certificate turns Ready.
	notAfter := time.Now().Add(90 * 24 * time.Hour).Truncate(time.Second)
	secret := tlsSecret(t, ingressNS, secretName, h, notAfter)
	g.Expect(k8sClient.Create(ctx, secret)).To(Succeed())
	g.Consistently(tlsReadyOf(d), "1s", poll).Should(Equal("False/"+kurzv1alpha1.ReasonCertificateNotReady), "the Certificate's word counts while cert-manager manages it")
	setCertificateReady(g, cert, "True", "Ready", "Certificate is up to date and has not expired")
	g.Eventually(tlsReadyOf(d), timeout, poll).Should(Equal("True/" + kurzv1alpha1.ReasonCertificateValid))
	g.Expect(d.Status.TLS.NotAfter).NotTo(BeNil())
	g.Expect(d.Status.TLS.NotAfter.Time).To(BeTemporally("==", notAfter))
	g.Expect(d.Status.TLS.SecretName).To(Equal(secretName))

	// A certificate for another name does not count.
	other := tlsSecret(t, ingressNS, secretName, "other.example", notAfter)
	update(g, secret, func() { secret.Data = other.Data })
	g.Eventually(tlsReadyOf(d), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonCertificateInvalid))
	g.Expect(d.Status.TLS.NotAfter).To(BeNil())
	// Neither the certificate nor the key ever reach the condition.
	g.Expect(meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionTLSReady).Message).NotTo(ContainSubstring("BEGIN"))
}

// setCertificateReady writes a Certificate's Ready condition, as
// cert-manager does, through the status subresource.
func setCertificateReady(g Gomega, cert *unstructured.Unstructured, status, reason, message string) {
	g.Eventually(func() error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(cert), cert); err != nil {
			return err
		}
		_ = unstructured.SetNestedSlice(cert.Object, []any{map[string]any{
			"type": "Ready", "status": status, "reason": reason, "message": message,
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		}}, "status", "conditions")
		return k8sClient.Status().Update(ctx, cert)
	}, timeout, poll).Should(Succeed())
}

// tlsSecret is a kubernetes.io/tls Secret with a self-signed certificate
// for dnsName.
func tlsSecret(t *testing.T, ns, name, dnsName string, notAfter time.Time) *corev1.Secret {
	t.Helper()
	cert, key := testenv.SelfSignedCert(t, dnsName, time.Now().Add(-time.Hour), notAfter)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key},
	}
}
