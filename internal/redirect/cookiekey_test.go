package redirect

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

// TestCookieKeySources: replicas given the same secret (flag, file or
// environment) sign cookies alike; without one, each process has its own key.
func TestCookieKeySources(t *testing.T) {
	g := NewWithT(t)
	key := func(o Options) []byte {
		k, err := o.cookieKey()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(k).To(HaveLen(32))
		return k
	}

	t.Setenv(CookieSecretEnv, "")
	g.Expect(key(Options{})).NotTo(Equal(key(Options{})), "no secret: a random key per process")

	fromFlag := key(Options{CookieSecret: "s3cret"})
	g.Expect(key(Options{CookieSecret: "s3cret"})).To(Equal(fromFlag))
	g.Expect(fromFlag).NotTo(Equal([]byte("s3cret")), "the secret is never used raw")

	file := filepath.Join(t.TempDir(), "secret")
	g.Expect(os.WriteFile(file, []byte("s3cret\n"), 0o600)).To(Succeed())
	g.Expect(key(Options{CookieSecretFile: file})).To(Equal(fromFlag))

	t.Setenv(CookieSecretEnv, "s3cret")
	g.Expect(key(Options{})).To(Equal(fromFlag), "the environment is read when no flag is given")
	g.Expect(key(Options{CookieSecret: "other"})).NotTo(Equal(fromFlag), "a flag wins over the environment")

	g.Expect(os.WriteFile(file, nil, 0o600)).To(Succeed())
	empty := Options{CookieSecretFile: file}
	_, err := empty.cookieKey()
	g.Expect(err).To(MatchError(ContainSubstring("is empty")))
}
