package consolesession

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
)

// LoadKeyFile reads the keys of path (--console-session-key-file): one a
// line, blank lines ignored, the first sealing and every one opening (key
// rotation). Each must be at least MinKeyLength bytes.
func LoadKeyFile(path string) (*Sealer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--console-session-key-file: %w", err)
	}
	var secrets [][]byte
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if len(line) < MinKeyLength {
			return nil, fmt.Errorf("--console-session-key-file %s: a key is %d bytes, at least %d are needed", path, len(line), MinKeyLength)
		}
		secrets = append(secrets, line)
	}
	if len(secrets) == 0 {
		return nil, fmt.Errorf("--console-session-key-file %s: no key in the file", path)
	}
	return NewSealer(secrets...)
}

// WriteKeyFile writes a new random key to path (mode 0600) unless the
// file exists; `kurz dev` keeps its sessions across restarts this way.
func WriteKeyFile(path string) error {
	secret := make([]byte, 48)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	line := fmt.Appendf(nil, "%x\n", secret)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if os.IsExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("console session key: %w", err)
	}
	if _, err := f.Write(line); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return fmt.Errorf("console session key: %w", err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("console session key: %w", err)
	}
	return nil
}
