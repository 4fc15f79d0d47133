package devenv_test

import (
	"flag"
	"os"
	"testing"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestMain builds nothing up front: the tests that run bin/kurz ask
// testenv.Kurz for it, and the pure ones run without it.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	testenv.RemoveKurz()
	os.Exit(code)
}
