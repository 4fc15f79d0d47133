package controllers_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kurz-dev/kurz/controllers"
)

// The cache keeps a Secret's certificate and drops everything else, the
// private key above all: a heap dump of kurz holds no key of its namespace.
func TestSecretCacheKeepsNoPrivateKey(t *testing.T) {
	g := NewWithT(t)
	in := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kurz-tls-go.example.com", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       []byte("cert"),
			corev1.TLSPrivateKeyKey: []byte("key"),
			"ca.crt":                []byte("ca"),
		},
		StringData: map[string]string{"password": "x"},
	}
	out, err := controllers.CertificateOnly(in)
	g.Expect(err).NotTo(HaveOccurred())
	s := out.(*corev1.Secret)
	g.Expect(s.Data).To(Equal(map[string][]byte{corev1.TLSCertKey: []byte("cert")}))
	g.Expect(s.StringData).To(BeNil())
	g.Expect(s.ManagedFields).To(BeNil())
	g.Expect(s.Name).To(Equal("kurz-tls-go.example.com"))

	// A Secret without a certificate keeps no data at all.
	out, err = controllers.CertificateOnly(&corev1.Secret{Data: map[string][]byte{"token": []byte("t")}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.(*corev1.Secret).Data).To(BeNil())
}
