package testenv

import (
	"net"
	"testing"
)

// FreeAddr returns a loopback address whose port nobody listened on a
// moment ago, for a server a test starts (tests never use fixed ports).
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
