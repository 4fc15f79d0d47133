package clicks

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
		{Name: "no flush interval", Edit: func(o *Options) { o.FlushInterval = 0 }, Error: "--click-flush-interval"},
		{Name: "no flush rate", Edit: func(o *Options) { o.FlushQPS = 0 }, Error: "--click-flush-qps"},
		{Name: "smallest spool volume", Edit: func(o *Options) { o.SpoolSizeLimit = minSpoolSizeLimit }, Error: ""},
		{Name: "spool volume too small", Edit: func(o *Options) { o.SpoolSizeLimit = minSpoolSizeLimit - 1 }, Error: "--click-spool-size-limit"},
		// The spool's directory is New's to check (kurz dev creates it
		// after validating its flags).
		{Name: "spool in a missing directory", Edit: func(o *Options) { o.Spool = "/nonexistent/clicks.spool" }, Error: ""},
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
		o.Spool = spool
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
	g.Expect(o.SpoolSizeLimit).To(Equal(int64(1 << 30)))
	g.Expect(fs.Parse([]string{"--click-spool-size-limit=100000"})).To(Succeed())
	g.Expect(o.SpoolSizeLimit).To(Equal(int64(100000)))
	for _, bad := range []string{"lots", "1.5", "64m"} {
		g.Expect(fs.Parse([]string{"--click-spool-size-limit=" + bad})).NotTo(Succeed(), bad)
	}
}
