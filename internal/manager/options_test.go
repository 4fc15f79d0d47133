package manager

import (
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/optionstest"
)

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		error string // "" when valid
	}{
		{"defaults", nil, ""},
		{"defaults with leader election", []string{"--leader-elect"}, ""},
		{"short times for tests", []string{"--leader-elect", "--leader-election-lease-duration=3s",
			"--leader-election-renew-deadline=2s", "--leader-election-retry-period=500ms"}, ""},
		{"renew not below lease", []string{"--leader-elect", "--leader-election-lease-duration=10s",
			"--leader-election-renew-deadline=10s"}, "must be less than --leader-election-lease-duration"},
		{"retry too close to renew", []string{"--leader-elect", "--leader-election-renew-deadline=2s",
			"--leader-election-retry-period=2s"}, "must exceed 1.2 x --leader-election-retry-period"},
		{"zero retry", []string{"--leader-elect", "--leader-election-retry-period=0s"}, "must be positive"},
		{"times unchecked without election", []string{"--leader-election-retry-period=0s"}, ""},
		{"empty lease name", []string{"--leader-elect", "--leader-election-id="}, "--leader-election-id must not be empty"},
		{"negative shutdown delay", []string{"--shutdown-delay=-1s"}, "--shutdown-delay must not be negative"},
		{"no shutdown delay", []string{"--shutdown-delay=0s"}, ""},
		{"metrics cert files missing", []string{"--metrics-cert-path=" + os.TempDir()}, "no file tls.crt"},
		{"metrics cert without https", []string{"--metrics-secure=false", "--metrics-cert-path=/x"}, "--metrics-cert-path needs --metrics-secure"},
		{"plain http metrics", []string{"--metrics-secure=false"}, ""},
		{"a controllers flag", []string{"--link-workers=0"}, "--link-workers (0)"},
		{"an API flag", []string{"--api-rate-limit=-1"}, "--api-rate-limit must not be negative"},
		{"a role switched off is not checked", []string{"--controllers=false", "--link-workers=0"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			o := DefaultOptions()
			g.Expect(optionstest.Parse(&o, tc.args...)).To(Succeed())
			err := o.Validate()
			if tc.error == "" {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(err).To(MatchError(ContainSubstring(tc.error)))
				optionstest.ExpectEachOnce(g, err)
			}
		})
	}
}

// The manager waits long enough for the slowest shutdown step: the
// redirect server drains and then flushes, each up to its timeout.
func TestGracefulShutdownTimeout(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	g.Expect(gracefulShutdownTimeout(o)).To(Equal(2*o.Redirect.ShutdownTimeout + shutdownMargin))
	o.API.ShutdownTimeout = time.Minute
	g.Expect(gracefulShutdownTimeout(o)).To(Equal(time.Minute + shutdownMargin))
}
