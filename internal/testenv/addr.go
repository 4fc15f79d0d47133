package testenv

import (
	"testing"

	"github.com/kurz-dev/kurz/internal/freeport"
)

// FreeAddr returns a loopback address whose port nobody listened on a
// moment ago and that no earlier call in this process returned, for a
// server a test starts (tests never use fixed ports).
func FreeAddr(t testing.TB) string {
	t.Helper()
	a, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return a
}
