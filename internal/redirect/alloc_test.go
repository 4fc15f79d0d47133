package redirect

import (
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/valyala/fasthttp"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// hotPathCases are the requests most redirects are: a plain redirect, one
// with device targeting and utm parameters merged in, one whose utm
// parameters are joined to the URL as it is written, a HEAD, an unknown key
// sent to the domain's not-found URL, and an unknown host.
var hotPathCases = []struct {
	name, method, host, path, ua string
	status                       int
}{
	{"redirect", http.MethodGet, "go.test", "/plain", "", http.StatusFound},
	{"device and utm", http.MethodGet, "go.test", "/app", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)", http.StatusFound},
	{"utm joined to the URL", http.MethodGet, "go.test", "/app", "", http.StatusFound},
	{"head", http.MethodHead, "go.test", "/plain", "", http.StatusFound},
	{"unknown key", http.MethodGet, "go.test", "/nope", "", http.StatusFound},
	{"unknown host", http.MethodGet, "other.test", "/plain", "", http.StatusNotFound},
}

// hotPathHandler is a handler over an index holding the links of
// hotPathCases.
func hotPathHandler() *handler {
	ix := NewIndex()
	d := testDomain("ns", "d", "go.test", 1)
	nf := kurzv1alpha1.URL("https://example.org/")
	d.Spec.NotFoundURL = &nf
	ix.UpsertDomain(d)
	ix.UpsertLink(testLink("ns", "plain", "go.test", "plain", 2))
	app := testLink("ns", "app", "go.test", "app", 3)
	ios := kurzv1alpha1.URL("https://apps.apple.com/app/id1")
	src := "newsletter"
	app.Spec.IOS, app.Spec.UTM = &ios, &kurzv1alpha1.LinkUTM{Source: &src}
	ix.UpsertLink(app)
	registerMetrics()
	return &handler{ix: ix, status: http.StatusFound}
}

func hotPathRequest(ctx *fasthttp.RequestCtx, method, host, path, ua string) {
	ctx.Request.Reset()
	ctx.Request.Header.SetMethod(method)
	ctx.Request.Header.SetHost(host)
	ctx.Request.SetRequestURI(path)
	if ua != "" {
		ctx.Request.Header.SetUserAgent(ua)
	}
}

// The redirect hot path allocates nothing per request: at tens of
// thousands of requests a second, garbage would cost GC time on the core
// that serves.
func TestHotPathAllocatesNothing(t *testing.T) {
	h := hotPathHandler()
	for _, c := range hotPathCases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			var ctx fasthttp.RequestCtx
			hotPathRequest(&ctx, c.method, c.host, c.path, c.ua)
			h.serve(&ctx) // the first click queues the link's counter
			g.Expect(ctx.Response.StatusCode()).To(Equal(c.status))
			allocs := testing.AllocsPerRun(1000, func() {
				ctx.Response.Reset()
				h.serve(&ctx)
			})
			g.Expect(ctx.Response.StatusCode()).To(Equal(c.status))
			g.Expect(allocs).To(BeZero())
		})
	}
}

// BenchmarkHotPath measures the handler alone, without the network:
// go test -run '^$' -bench HotPath -benchmem ./internal/redirect/
func BenchmarkHotPath(b *testing.B) {
	h := hotPathHandler()
	for _, c := range hotPathCases {
		b.Run(c.name, func(b *testing.B) {
			var ctx fasthttp.RequestCtx
			hotPathRequest(&ctx, c.method, c.host, c.path, c.ua)
			b.ReportAllocs()
			for b.Loop() {
				ctx.Response.Reset()
				h.serve(&ctx)
			}
		})
	}
}
