package webhooks

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
)

// Standard Webhooks (github.com/standard-webhooks/standard-webhooks,
// spec/standard-webhooks.md): the symmetric scheme. The signed content is
// "<webhook-id>.<webhook-timestamp>.<body>", the MAC is HMAC-SHA256 keyed
// by the secret's decoded bytes, and the header is "v1,<base64 MAC>", one
// per secret separated by spaces (so a receiver keeps verifying while a
// secret is rotated).

const (
	// SecretPrefix starts every Standard Webhooks symmetric secret.
	SecretPrefix = "whsec_"
	// minSecretBytes and maxSecretBytes bound a secret's decoded length:
	// 24 to 64 bytes (192 to 512 bits), as the spec says.
	minSecretBytes = 24
	maxSecretBytes = 64
	// maxSecrets bounds the secrets of one value (rotation needs two).
	maxSecrets = 4
)

// ErrSecretInvalid is returned for a value that is not one to four
// Standard Webhooks secrets. Its text never repeats the value.
var ErrSecretInvalid = errors.New(`the value must be a Standard Webhooks secret: "whsec_" followed by the base64 of 24 to 64 random bytes (several separated by spaces while rotating)`)

// ParseSecret decodes a Secret's value: one or more "whsec_<base64>"
// separated by spaces or newlines. Raw keys without the prefix are refused:
// the prefix tells a signing secret from a password pasted by mistake, and
// receivers' libraries expect it.
func ParseSecret(value []byte) ([][]byte, error) {
	fields := bytes.Fields(value)
	if len(fields) == 0 || len(fields) > maxSecrets {
		return nil, ErrSecretInvalid
	}
	keys := make([][]byte, 0, len(fields))
	for _, f := range fields {
		enc, ok := bytes.CutPrefix(f, []byte(SecretPrefix))
		if !ok {
			return nil, ErrSecretInvalid
		}
		key, err := base64.StdEncoding.DecodeString(string(enc))
		if err != nil {
			key, err = base64.RawStdEncoding.DecodeString(string(enc))
		}
		if err != nil || len(key) < minSecretBytes || len(key) > maxSecretBytes {
			return nil, ErrSecretInvalid
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// signature is the webhook-signature header of body sent with id at
// timestamp ts (unix seconds), signed with each key.
func signature(keys [][]byte, id string, ts int64, body []byte) string {
	var b []byte
	prefix := []byte(id + "." + strconv.FormatInt(ts, 10) + ".")
	for i, k := range keys {
		m := hmac.New(sha256.New, k)
		m.Write(prefix)
		m.Write(body)
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, "v1,"...)
		b = base64.StdEncoding.AppendEncode(b, m.Sum(nil))
	}
	return string(b)
}
