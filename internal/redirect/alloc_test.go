package redirect

import (
	"fmt"
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/valyala/fasthttp"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/analytics/capture"
)

// hotPathCases are the requests most redirects are: a plain redirect, one
// with device targeting and utm parameters merged in, one whose utm
// parameters are joined to the URL as it is written, a HEAD, an unknown key
// sent to the domain's not-found URL, and an unknown host.
var hotPathCases = []struct {
	name, method, host, path, ua string
	status                       int
	// clicks: the request is a click (analytics captures it)
	clicks bool
}{
	{"redirect", http.MethodGet, "go.test", "/plain", "", http.StatusFound, true},
	{"device and utm", http.MethodGet, "go.test", "/app", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)", http.StatusFound, true},
	{"utm joined to the URL", http.MethodGet, "go.test", "/app", "", http.StatusFound, true},
	{"browser", http.MethodGet, "go.test", "/plain", browserUA, http.StatusFound, true},
	{"head", http.MethodHead, "go.test", "/plain", "", http.StatusFound, false},
	{"unknown key", http.MethodGet, "go.test", "/nope", "", http.StatusFound, false},
	{"unknown host", http.MethodGet, "other.test", "/plain", "", http.StatusNotFound, false},
}

// browserUA is a desktop Chrome's User-Agent; every hot-path request also
// carries the rest of what a browser sends (Referer, Accept, Accept-Language,
// a cookie) and the country header a CDN adds.
const browserUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"

const countryHeader = "CF-IPCountry"

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
	return &handler{ix: ix, status: http.StatusFound, countryHeader: fasthttp.AppendNormalizedHeaderKey(nil, countryHeader)}
}

func hotPathRequest(ctx *fasthttp.RequestCtx, method, host, path, ua string) {
	ctx.Request.Reset()
	ctx.Request.Header.SetMethod(method)
	ctx.Request.Header.SetHost(host)
	ctx.Request.SetRequestURI(path)
	if ua != "" {
		ctx.Request.Header.SetUserAgent(ua)
	}
	ctx.Request.Header.Set("Referer", "https://www.example.com/articles/2024/spring-sale?ref=front")
	ctx.Request.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	ctx.Request.Header.Set("Accept-Language", "de-DE,de;q=0.9,en;q=0.8")
	ctx.Request.Header.Set("Cookie", "session=0123456789abcdef; theme=dark")
	ctx.Request.Header.Set(countryHeader, "DE")
}

// The redirect hot path allocates nothing per request, with click
// analytics capturing every click and with the headers a browser sends: at
// tens of thousands of requests a second, garbage would cost GC time on the
// core that serves. The ring (512 slots) fills during the 1 001 runs, so
// both a captured click and a dropped one are measured.
func TestHotPathAllocatesNothing(t *testing.T) {
	h := hotPathHandler()
	for _, analyticsOn := range []bool{false, true} {
		for _, c := range hotPathCases {
			t.Run(fmt.Sprintf("%s/analytics=%v", c.name, analyticsOn), func(t *testing.T) {
				g := NewWithT(t)
				h.analytics = nil
				if analyticsOn {
					h.analytics = capture.NewRing(512)
				}
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
				if analyticsOn && c.clicks {
					g.Expect(h.analytics.Len()).To(Equal(512), "the clicks were captured")
					g.Expect(h.analytics.Dropped()).To(BeEquivalentTo(1002-512), "a full ring drops")
				} else if analyticsOn {
					g.Expect(h.analytics.Len()).To(BeZero(), "no click, nothing captured")
				}
			})
		}
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
			h.analytics = nil
			b.ReportAllocs()
			for b.Loop() {
				ctx.Response.Reset()
				h.serve(&ctx)
			}
		})
	}
}
