package redirect

import (
	"flag"
	"io"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/optionstest"
)

func TestOptionsValidate(t *testing.T) {
	optionstest.Validate(t, DefaultOptions, []optionstest.Case[Options]{
		{Name: "status 301", Edit: func(o *Options) { o.Status = 301 }, Error: ""},
		{Name: "status 200", Edit: func(o *Options) { o.Status = 200 }, Error: "--redirect-status"},
		{Name: "no flush interval", Edit: func(o *Options) { o.ClickFlushInterval = 0 }, Error: "--click-flush-interval"},
		{Name: "no flush rate", Edit: func(o *Options) { o.ClickFlushQPS = 0 }, Error: "--click-flush-qps"},
		{Name: "no shutdown timeout", Edit: func(o *Options) { o.ShutdownTimeout = 0 }, Error: "--redirect-shutdown-timeout"},
		{Name: "no password checks", Edit: func(o *Options) { o.PasswordConcurrency = 0 }, Error: "--redirect-password-concurrency"},
		{Name: "no connections", Edit: func(o *Options) { o.MaxConns = 0 }, Error: "--redirect-max-conns"},
		{Name: "negative connections per peer", Edit: func(o *Options) { o.MaxConnsPerIP = -1 }, Error: "--redirect-max-conns-per-ip"},
		{Name: "smallest spool volume", Edit: func(o *Options) { o.ClickSpoolSizeLimit = minSpoolSizeLimit }, Error: ""},
		{Name: "spool volume too small", Edit: func(o *Options) { o.ClickSpoolSizeLimit = minSpoolSizeLimit - 1 }, Error: "--click-spool-size-limit"},
		// The spool's directory is Setup's to check (kurz dev creates it
		// after validating its flags).
		{Name: "spool in a missing directory", Edit: func(o *Options) { o.ClickSpool = "/nonexistent/clicks.spool" }, Error: ""},
	})
}

func TestCheckSpool(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	for spool, want := range map[string]string{
		"":                                     "",
		filepath.Join(dir, "clicks.spool"):     "",
		filepath.Join(dir, "missing", "spool"): "its directory must exist",
		dir:                                    "is a directory, not a file",
	} {
		o := DefaultOptions()
		o.ClickSpool = spool
		if want == "" {
			g.Expect(o.checkSpool()).To(Succeed(), spool)
		} else {
			g.Expect(o.checkSpool()).To(MatchError(ContainSubstring(want)), spool)
		}
	}
}

func TestClickSpoolSizeLimitFlag(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	g.Expect(fs.Lookup("click-spool-size-limit").DefValue).To(Equal("64Mi"))
	g.Expect(fs.Parse([]string{"--click-spool-size-limit=1Gi"})).To(Succeed())
	g.Expect(o.ClickSpoolSizeLimit).To(Equal(int64(1 << 30)))
	g.Expect(fs.Parse([]string{"--click-spool-size-limit=100000"})).To(Succeed())
	g.Expect(o.ClickSpoolSizeLimit).To(Equal(int64(100000)))
	for _, bad := range []string{"lots", "1.5", "64m"} {
		g.Expect(fs.Parse([]string{"--click-spool-size-limit=" + bad})).NotTo(Succeed(), bad)
	}
}
