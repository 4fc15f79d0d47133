package consolesession

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// MaxAge caps a session whatever its token's expiry: a console left signed
// in on a shared machine ends within a working day.
const MaxAge = 8 * time.Hour

// version is the first byte of a sealed value, authenticated with it: a
// later format can be told apart (and is refused here).
const version = 1

// csrfBytes is the length of the CSRF secret.
const csrfBytes = 32

// ErrInvalid is any value that does not open: sealed under another key,
// changed, truncated, of another version, or expired. Callers answer 401
// without saying which.
var ErrInvalid = errors.New("console session: invalid or expired")

// Session is what a console cookie carries.
type Session struct {
	// Token is the API token the user signed in with.
	Token string
	// Expires ends the session (whole seconds).
	Expires time.Time
	// CSRF is the secret state-changing requests must repeat in a header,
	// base64url without padding.
	CSRF string
}

// Sealer seals with its first key and opens with any of them.
type Sealer struct {
	aeads []cipher.AEAD
}

// NewSealer derives an AES-256-GCM key from each secret (SHA-256 with a
// label, so a secret of any length and alphabet, e.g. Helm's randAlphaNum,
// gives a full-strength key); the first seals.
func NewSealer(secrets ...[]byte) (*Sealer, error) {
	if len(secrets) == 0 {
		return nil, errors.New("console session: no key")
	}
	s := &Sealer{}
	for _, secret := range secrets {
		if len(secret) < MinKeyLength {
			return nil, fmt.Errorf("console session: a key must be at least %d bytes, not %d", MinKeyLength, len(secret))
		}
		key := sha256.Sum256(append([]byte("kurz console session key\x00"), secret...))
		block, err := aes.NewCipher(key[:])
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		s.aeads = append(s.aeads, aead)
	}
	return s, nil
}

// MinKeyLength is the shortest secret accepted: 32 characters of
// randAlphaNum are about 190 bits.
const MinKeyLength = 32

// RandomSealer seals under a random key of this process only.
func RandomSealer() (*Sealer, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	return NewSealer(secret)
}

// NewCSRF returns a fresh CSRF secret.
func NewCSRF() (string, error) {
	b := make([]byte, csrfBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// CSRFMatches compares a request's CSRF header with the session's in
// constant time; an empty header never matches.
func CSRFMatches(header, secret string) bool {
	return header != "" && subtle.ConstantTimeCompare([]byte(header), []byte(secret)) == 1
}

// aad binds a sealed value to its version and purpose.
var aad = []byte{version, 'k', 'u', 'r', 'z', '-', 'c', 'o', 'n', 's', 'o', 'l', 'e'}

// Seal encrypts s: base64url(version, nonce, AES-GCM(expires, csrf, token)).
func (k *Sealer) Seal(s Session) (string, error) {
	csrf, err := base64.RawURLEncoding.DecodeString(s.CSRF)
	if err != nil || len(csrf) != csrfBytes {
		return "", errors.New("console session: malformed CSRF secret")
	}
	aead := k.aeads[0]
	plain := make([]byte, 8, 8+csrfBytes+len(s.Token))
	binary.BigEndian.PutUint64(plain, uint64(s.Expires.Unix()))
	plain = append(append(plain, csrf...), s.Token...)
	out := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(plain)+aead.Overhead())
	out[0] = version
	if _, err := rand.Read(out[1:]); err != nil {
		return "", err
	}
	out = aead.Seal(out, out[1:], plain, aad)
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// Open decrypts a sealed value with any key and refuses it once expired
// at now.
func (k *Sealer) Open(value string, now time.Time) (Session, error) {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) < 1 || raw[0] != version {
		return Session{}, ErrInvalid
	}
	for _, aead := range k.aeads {
		n := aead.NonceSize()
		if len(raw) < 1+n+aead.Overhead()+8+csrfBytes {
			return Session{}, ErrInvalid
		}
		plain, err := aead.Open(nil, raw[1:1+n], raw[1+n:], aad)
		if err != nil {
			continue
		}
		s := Session{
			Expires: time.Unix(int64(binary.BigEndian.Uint64(plain)), 0),
			CSRF:    base64.RawURLEncoding.EncodeToString(plain[8 : 8+csrfBytes]),
			Token:   string(plain[8+csrfBytes:]),
		}
		if !now.Before(s.Expires) {
			return Session{}, ErrInvalid
		}
		return s, nil
	}
	return Session{}, ErrInvalid
}
