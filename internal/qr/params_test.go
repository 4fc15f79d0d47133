package qr

import (
	"image/color"
	"net/url"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{R: r, G: g, B: b, A: 0xff} }

var (
	black = rgb(0, 0, 0)
	white = rgb(0xff, 0xff, 0xff)
)

func TestParseParamsValid(t *testing.T) {
	defaults := Options{Foreground: black, Background: white, Size: 512, Level: "M", Margin: 4, Format: "png"}
	with := func(f func(*Options)) Options {
		o := defaults
		f(&o)
		return o
	}
	cases := []struct {
		name     string
		query    string
		body     string
		download bool
		want     Options
	}{
		{name: "nothing", want: defaults},
		{name: "empty body", body: "  \n", want: defaults},
		{name: "null body", body: "null", want: defaults},
		{name: "empty object", body: "{}", want: defaults},
		{name: "unknown ignored", query: "foo=bar&page=2", body: `{"x": [1], "y": {}}`, want: defaults},
		{
			name:     "query",
			query:    "download=true&color=%231A2B3C&background=%23abc&size=300&level=q&margin=0&format=SVG",
			download: true,
			want:     Options{Foreground: rgb(0x1a, 0x2b, 0x3c), Background: rgb(0xaa, 0xbb, 0xcc), Size: 300, Level: "Q", Margin: 0, Format: "svg"},
		},
		{
			name:     "typed JSON",
			body:     `{"download": true, "color": "#FF0000", "background": "#00ff00", "size": 2048, "level": "H", "margin": 32, "format": "png"}`,
			download: true,
			want:     Options{Foreground: rgb(0xff, 0, 0), Background: rgb(0, 0xff, 0), Size: 2048, Level: "H", Margin: 32, Format: "png"},
		},
		{
			name:     "JSON strings",
			body:     `{"download": "1", "size": "64", "margin": "1", "level": "l"}`,
			download: true,
			want:     with(func(o *Options) { o.Size, o.Margin, o.Level = 64, 1, "L" }),
		},
		{name: "download false", body: `{"download": false}`, want: defaults},
		{name: "download 0", query: "download=0", want: defaults},
		{name: "download 1 as number", body: `{"download": 1}`, download: true, want: defaults},
		{name: "colour without hash", query: "color=123", want: with(func(o *Options) { o.Foreground = rgb(0x11, 0x22, 0x33) })},
		{
			name:  "query wins over body",
			query: "size=100&color=%23000001",
			body:  `{"size": 200, "color": "#000002", "margin": 7}`,
			want:  with(func(o *Options) { o.Size, o.Foreground, o.Margin = 100, rgb(0, 0, 1), 7 }),
		},
		{name: "empty query value falls back to body", query: "size=", body: `{"size": 99}`, want: with(func(o *Options) { o.Size = 99 })},
		{name: "empty and null values are defaults", query: "color=", body: `{"size": "", "margin": null}`, want: defaults},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			q, err := url.ParseQuery(c.query)
			g.Expect(err).NotTo(HaveOccurred())
			var body []byte
			if c.body != "" {
				body = []byte(c.body)
			}
			p, fieldErrs, err := ParseParams(q, body)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(fieldErrs).To(BeNil())
			g.Expect(p.Download).To(Equal(c.download))
			g.Expect(p.Options).To(Equal(c.want))
		})
	}
}

func TestParseParamsFieldErrors(t *testing.T) {
	const (
		colorMsg      = "The color must be a hex colour like #1A2B3C."
		backgroundMsg = "The background must be a hex colour like #1A2B3C."
		sizeInt       = "The size must be an integer."
		sizeRange     = "The size must be between 64 and 2048."
		levelMsg      = "The level must be one of L, M, Q, H."
		marginInt     = "The margin must be an integer."
		marginRange   = "The margin must be between 0 and 32."
		formatMsg     = "The format must be png or svg."
		downloadMsg   = "The download field must be true or false."
	)
	cases := []struct {
		name  string
		query string
		body  string
		want  map[string][]string
	}{
		{name: "bad hex", query: "color=%23GG0000", want: map[string][]string{"color": {colorMsg}}},
		{name: "hex too long", query: "color=%231234567", want: map[string][]string{"color": {colorMsg}}},
		{name: "hex 4 digits", body: `{"color": "#1234"}`, want: map[string][]string{"color": {colorMsg}}},
		{name: "colour name", body: `{"background": "red"}`, want: map[string][]string{"background": {backgroundMsg}}},
		{name: "colour as number", body: `{"color": 123456}`, want: map[string][]string{"color": {colorMsg}}},
		{name: "size too small", query: "size=63", want: map[string][]string{"size": {sizeRange}}},
		{name: "size too large", body: `{"size": 2049}`, want: map[string][]string{"size": {sizeRange}}},
		{name: "size overflow", query: "size=99999999999999999999", want: map[string][]string{"size": {sizeRange}}},
		{name: "size not a number", query: "size=big", want: map[string][]string{"size": {sizeInt}}},
		{name: "size fraction", body: `{"size": 100.5}`, want: map[string][]string{"size": {sizeInt}}},
		{name: "size bool", body: `{"size": true}`, want: map[string][]string{"size": {sizeInt}}},
		{name: "size array", body: `{"size": [512]}`, want: map[string][]string{"size": {sizeInt}}},
		{name: "level X", query: "level=X", want: map[string][]string{"level": {levelMsg}}},
		{name: "margin -1", query: "margin=-1", want: map[string][]string{"margin": {marginRange}}},
		{name: "margin 33", body: `{"margin": 33}`, want: map[string][]string{"margin": {marginRange}}},
		{name: "margin text", body: `{"margin": "wide"}`, want: map[string][]string{"margin": {marginInt}}},
		{name: "format gif", query: "format=gif", want: map[string][]string{"format": {formatMsg}}},
		{name: "download maybe", query: "download=maybe", want: map[string][]string{"download": {downloadMsg}}},
		{name: "download object", body: `{"download": {}}`, want: map[string][]string{"download": {downloadMsg}}},
		{
			name:  "all at once",
			query: "download=maybe&color=x&background=y&size=1&level=X&margin=-1&format=gif",
			want: map[string][]string{
				"download": {downloadMsg}, "color": {colorMsg}, "background": {backgroundMsg},
				"size": {sizeRange}, "level": {levelMsg}, "margin": {marginRange}, "format": {formatMsg},
			},
		},
		{
			name:  "a valid query value hides an invalid body value",
			query: "size=100",
			body:  `{"size": "huge", "level": "Z"}`,
			want:  map[string][]string{"level": {levelMsg}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			q, err := url.ParseQuery(c.query)
			g.Expect(err).NotTo(HaveOccurred())
			_, fieldErrs, err := ParseParams(q, []byte(c.body))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(fieldErrs).To(Equal(c.want))
		})
	}
}

func TestParseParamsBadBody(t *testing.T) {
	for _, body := range []string{`[]`, `"text"`, `512`, `true`, `{"size":`, `{"a":1}x`, `{"color": "\ud800"`} {
		t.Run(body, func(t *testing.T) {
			g := NewWithT(t)
			_, fieldErrs, err := ParseParams(url.Values{"size": {"100"}}, []byte(body))
			g.Expect(err).To(MatchError(ContainSubstring("not a JSON object")))
			g.Expect(fieldErrs).To(BeNil())
		})
	}
}

func FuzzParseParams(f *testing.F) {
	f.Add("", []byte(nil))
	f.Add("color=%23abc&size=300&level=Q&margin=0&format=svg&download=true", []byte(`{}`))
	f.Add("size=abc", []byte(`{"size": 512, "color": "#000000", "download": "maybe"}`))
	f.Add("", []byte(`[1,2]`))
	f.Add("margin=-1", []byte(`{"margin": null, "format": "gif", "background": ["x"]}`))
	known := map[string]bool{"download": true, "color": true, "background": true, "size": true, "level": true, "margin": true, "format": true}
	f.Fuzz(func(t *testing.T, query string, body []byte) {
		q, _ := url.ParseQuery(query)
		p, fieldErrs, err := ParseParams(q, body)
		if err != nil {
			if fieldErrs != nil {
				t.Fatalf("both an error and field errors: %v %v", err, fieldErrs)
			}
			return
		}
		for k, msgs := range fieldErrs {
			if !known[k] || len(msgs) == 0 || !strings.HasPrefix(msgs[0], "The "+k) {
				t.Fatalf("field error %q: %q", k, msgs)
			}
		}
		if fieldErrs == nil {
			// Whatever parsed cleanly must render.
			o := p.Options
			o.Content = "https://kurz.example/k"
			if err := o.validate(); err != nil {
				t.Fatalf("ParseParams accepted %+v: %v", p.Options, err)
			}
			if o.Foreground.A != 0xff || o.Background.A != 0xff {
				t.Fatalf("colours not opaque: %+v", o)
			}
		}
	})
}
