package freeport

import "testing"

// TestAddrNeverRepeats asks for many more addresses than a test would; the
// kernel returns recently closed ports again (hundreds of repeats in 2000
// plain binds to port 0 on this machine), Addr must not.
func TestAddrNeverRepeats(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		a, err := Addr()
		if err != nil {
			t.Fatal(err)
		}
		if seen[a] {
			t.Fatalf("Addr returned %s twice", a)
		}
		seen[a] = true
	}
}
