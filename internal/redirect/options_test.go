package redirect

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/optionstest"
)

func TestOptionsValidate(t *testing.T) {
	optionstest.Validate(t, DefaultOptions, []optionstest.Case[Options]{
		{Name: "status 301", Edit: func(o *Options) { o.Status = 301 }, Error: ""},
		{Name: "status 200", Edit: func(o *Options) { o.Status = 200 }, Error: "--redirect-status"},
		// The click flags are package clicks' (its own table); Validate
		// checks them too.
		{Name: "no flush interval", Edit: func(o *Options) { o.Clicks.FlushInterval = 0 }, Error: "--click-flush-interval"},
		{Name: "no shutdown timeout", Edit: func(o *Options) { o.ShutdownTimeout = 0 }, Error: "--redirect-shutdown-timeout"},
		{Name: "no password checks", Edit: func(o *Options) { o.PasswordConcurrency = 0 }, Error: "--redirect-password-concurrency"},
		{Name: "no connections", Edit: func(o *Options) { o.MaxConns = 0 }, Error: "--redirect-max-conns"},
		{Name: "negative connections per peer", Edit: func(o *Options) { o.MaxConnsPerIP = -1 }, Error: "--redirect-max-conns-per-ip"},
	})
}

// Every bad option is reported, not only the first, as the other roles do.
func TestOptionsValidateJoins(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	o.Status, o.Clicks.FlushQPS, o.MaxConns = 200, 0, 0
	err := o.Validate()
	for _, flag := range []string{"--redirect-status", "--click-flush-qps", "--redirect-max-conns"} {
		g.Expect(err).To(MatchError(ContainSubstring(flag)))
	}
	optionstest.ExpectEachOnce(g, err)
}
