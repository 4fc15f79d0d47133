package otlp

import (
	"flag"
	"testing"

	. "github.com/onsi/gomega"
)

func TestOptions(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	fs := flag.NewFlagSet("kurz", flag.ContinueOnError)
	o.BindFlags(fs)
	g.Expect(fs.Parse([]string{"--analytics-otlp-endpoint", "http://collector:4318/", "--analytics-otlp-timeout", "3s"})).To(Succeed())
	g.Expect(o.Validate()).To(Succeed())
	g.Expect(logsURL(o.Endpoint)).To(Equal("http://collector:4318/v1/logs"))
	g.Expect(logsURL("https://otlp.example.com/otlp/v1/logs")).To(Equal("https://otlp.example.com/otlp/v1/logs"))

	bad := DefaultOptions()
	bad.Endpoint = "collector:4318"
	bad.Timeout = 0
	bad.Headers = map[string]string{"bad name": "secret-value"}
	err := bad.Validate()
	g.Expect(err).To(MatchError(ContainSubstring(`--analytics-otlp-endpoint "collector:4318": want an http:// or https:// URL`)))
	g.Expect(err).To(MatchError(ContainSubstring("--analytics-otlp-timeout must be positive")))
	g.Expect(err).To(MatchError(ContainSubstring(`header name "bad name"`)))
	g.Expect(err.Error()).NotTo(ContainSubstring("secret-value"))

	_, err = New(DefaultOptions())
	g.Expect(err).To(MatchError(ContainSubstring("--analytics-otlp-endpoint is empty")))
}

func TestParseHeaders(t *testing.T) {
	g := NewWithT(t)
	h, err := ParseHeaders("api-key=abc%3D%3D, X-Scope-OrgID = tenant-1,")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(h).To(Equal(map[string]string{"api-key": "abc==", "X-Scope-OrgID": "tenant-1"}))
	_, err = ParseHeaders("api-key=ok,secret-without-equals")
	g.Expect(err).To(MatchError(ContainSubstring("pair 2 has no '='")))
	g.Expect(err.Error()).NotTo(ContainSubstring("secret-without-equals"))
}

func TestHeadersFromEnv(t *testing.T) {
	g := NewWithT(t)
	t.Setenv(HeadersEnv, "authorization=Bearer%20tok")
	o := DefaultOptions()
	g.Expect(o.HeadersFromEnv()).To(Succeed())
	g.Expect(o.Headers).To(Equal(map[string]string{"authorization": "Bearer tok"}))
	t.Setenv(HeadersEnv, "broken")
	g.Expect(o.HeadersFromEnv()).To(MatchError(ContainSubstring(HeadersEnv)))
}
