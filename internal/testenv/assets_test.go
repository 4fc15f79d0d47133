package testenv

import (
	"testing"

	. "github.com/onsi/gomega"
)

// Every suite says the same when the control plane is missing, and names
// the commands that provide it.
func TestAssetsMissing(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("KUBEBUILDER_ASSETS", "")
	_, err := Assets()
	g.Expect(err).To(MatchError(And(ContainSubstring("KUBEBUILDER_ASSETS is not set"), ContainSubstring("make test"), ContainSubstring("make control-plane"))))
	_, startErr := Start(Options{})
	g.Expect(startErr).To(MatchError(err.Error()), "Start refuses with the same message")

	t.Setenv("KUBEBUILDER_ASSETS", "/opt/k8s")
	g.Expect(Assets()).To(Equal("/opt/k8s"))
}
