package redirect

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"strings"
)

// CookieSecretEnv is read when neither cookie flag is given. An environment
// variable keeps the secret out of the process's command line, and the
// deploy manifests can fill it from a Secret that may not exist yet.
const CookieSecretEnv = "KURZ_REDIRECT_COOKIE_SECRET"

// cookieKey derives the HMAC key for password cookies from the configured
// secret, or makes a random one for this process.
func (o *Options) cookieKey() ([]byte, error) {
	secret := o.CookieSecret
	if o.CookieSecretFile != "" {
		b, err := os.ReadFile(o.CookieSecretFile)
		if err != nil {
			return nil, fmt.Errorf("read --redirect-cookie-secret-file: %w", err)
		}
		secret = strings.TrimSpace(string(b))
		if secret == "" {
			return nil, errors.New("--redirect-cookie-secret-file is empty")
		}
	}
	if secret == "" {
		secret = strings.TrimSpace(os.Getenv(CookieSecretEnv))
	}
	if secret == "" {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("random cookie key: %w", err)
		}
		return key, nil
	}
	// Hash with a purpose prefix so the secret is never used raw and could be
	// shared with another use without the keys colliding.
	sum := sha256.Sum256([]byte("kurz redirect password cookie\x00" + secret))
	return sum[:], nil
}
