package webhooks

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/optionstest"
)

func TestOptionsValidate(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	NewWithT(t).Expect(os.WriteFile(notPEM, []byte("hello"), 0o600)).To(Succeed())
	optionstest.Validate(t, DefaultOptions, []optionstest.Case[Options]{
		{Name: "queue too small", Edit: func(o *Options) { o.QueueBytes = 1000 }, Error: "--webhook-queue-bytes"},
		{Name: "queue too large", Edit: func(o *Options) { o.QueueBytes = 2 << 30 }, Error: "--webhook-queue-bytes"},
		{Name: "dns server without port", Edit: func(o *Options) { o.DNSServer = "10.0.0.53" }, Error: "--webhook-dns-server"},
		{Name: "dns server", Edit: func(o *Options) { o.DNSServer = "10.0.0.53:53" }},
		{Name: "missing CA file", Edit: func(o *Options) { o.CAFile = filepath.Join(dir, "none.pem") }, Error: "--webhook-ca-file"},
		{Name: "CA file without a certificate", Edit: func(o *Options) { o.CAFile = notPEM }, Error: "no PEM certificate"},
		{Name: "loopback and services", Edit: func(o *Options) { o.AllowLoopback, o.AllowClusterServices = true, true }},
	})
	g := NewWithT(t)
	o := DefaultOptions()
	g.Expect(optionstest.Parse(&o, "--webhook-allow-loopback", "--webhook-queue-bytes=1048576")).To(Succeed())
	g.Expect(o.AllowLoopback).To(BeTrue())
	g.Expect(o.QueueBytes).To(Equal(int64(1 << 20)))
}
