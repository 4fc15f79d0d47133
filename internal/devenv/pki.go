package devenv

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 2 * 365 * 24 * time.Hour
	// renewBefore reissues a certificate this long before it expires, so a
	// start never hands out one that dies during the session.
	renewBefore = 30 * 24 * time.Hour

	// AdminUser is the user name in the admin client certificate.
	AdminUser = "kurz-dev-admin"
)

// pki holds the persisted keys and certificates under DIR/pki.
type pki struct {
	dir                       string
	caPEM                     []byte
	ca                        *x509.Certificate
	caKey                     crypto.Signer
	adminCertPEM, adminKeyPEM []byte
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

// loadOrCreatePKI loads the keys and certificates in dir, creating what is
// missing and reissuing certificates that are about to expire. Keys are kept:
// the service-account key in particular signs every token handed out.
func loadOrCreatePKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	p := &pki{dir: dir}
	if err := p.loadOrCreateCA(); err != nil {
		return nil, err
	}
	if err := p.writeSAPublicKey(); err != nil {
		return nil, err
	}
	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)},
	}
	if _, _, err := p.loadOrIssue("apiserver", serving); err != nil {
		return nil, err
	}
	admin := &x509.Certificate{
		Subject:     pkix.Name{CommonName: AdminUser, Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	var err error
	if p.adminCertPEM, p.adminKeyPEM, err = p.loadOrIssue("admin", admin); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *pki) loadOrCreateCA() error {
	certPath := p.path("ca.crt")
	key, err := loadOrCreateKey(p.path("ca.key"))
	if err != nil {
		return err
	}
	if certPEM, err := os.ReadFile(certPath); err == nil {
		if cert, err := parseCert(certPEM); err == nil && usable(cert) && samePublicKey(cert, key) {
			p.caPEM, p.ca, p.caKey = certPEM, cert, key
			return nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", certPath, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "kurz-dev-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return fmt.Errorf("create CA: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := writeFileAtomic(certPath, certPEM, 0o644); err != nil {
		return err
	}
	cert, err := parseCert(certPEM)
	if err != nil {
		return err
	}
	p.caPEM, p.ca, p.caKey = certPEM, cert, key
	return nil
}

// writeSAPublicKey loads or creates the service-account signing key sa.key
// and (re)writes its public half sa.pub, which kube-apiserver verifies
// tokens with (it does not read public keys from PKCS#8 private keys).
func (p *pki) writeSAPublicKey() error {
	key, err := loadOrCreateKey(p.path("sa.key"))
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return fmt.Errorf("encode the service-account public key: %w", err)
	}
	return writeFileAtomic(p.path("sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644)
}

// loadOrIssue returns the certificate and key NAME.crt and NAME.key, issuing
// a new certificate from tmpl when the stored one is missing, expiring, or
// not signed by the current CA.
func (p *pki) loadOrIssue(name string, tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	certPath, keyPath := p.path(name+".crt"), p.path(name+".key")
	key, err := loadOrCreateKey(keyPath)
	if err != nil {
		return nil, nil, err
	}
	if keyPEM, err = os.ReadFile(keyPath); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", keyPath, err)
	}
	if certPEM, err := os.ReadFile(certPath); err == nil {
		cert, err := parseCert(certPEM)
		if err == nil && usable(cert) && samePublicKey(cert, key) && cert.CheckSignatureFrom(p.ca) == nil {
			return certPEM, keyPEM, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("read %s: %w", certPath, err)
	}
	now := time.Now()
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.Add(leafValidity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, key.Public(), p.caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("issue %s certificate: %w", name, err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := writeFileAtomic(certPath, certPEM, 0o644); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

// loadOrCreateKey reads a PKCS#8 private key, creating an ECDSA P-256 key
// when the file does not exist.
func loadOrCreateKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		block, _ := pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("%s holds no PEM key: remove it to get a new one", path)
		}
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		signer, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("%s: unsupported key type %T", path, k)
		}
		return signer, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate %s: %w", path, err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", path, err)
	}
	if err := writeFileAtomic(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	return key, nil
}

func parseCert(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// usable reports whether cert stays valid for the renewal margin.
func usable(cert *x509.Certificate) bool {
	now := time.Now()
	return now.After(cert.NotBefore) && now.Add(renewBefore).Before(cert.NotAfter)
}

func samePublicKey(cert *x509.Certificate, key crypto.Signer) bool {
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(cert.PublicKey)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}
