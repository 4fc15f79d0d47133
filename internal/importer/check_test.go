package importer

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/optionstest"
)

// TestInvalidRecords: what the API would refuse is invalid, with every
// reason, naming the field and never a password or a URL's value.
func TestInvalidRecords(t *testing.T) {
	const header = "domain,key,url,tags,password,expires_at,external_id\n"
	tests := []struct {
		name, row string
		want      []string // substrings of the reason
		secret    string   // must not appear in the reason
	}{
		{name: "key", row: "go.example.com,a.b,https://example.com/,,,,", want: []string{`key "a.b" may contain only letters, digits, dashes and underscores`}},
		{name: "no domain", row: ",k,https://example.com/,,,,", want: []string{"no domain", "--domain"}},
		{name: "IP domain", row: "10.0.0.1,k,https://example.com/,,,,", want: []string{`domain "10.0.0.1" must be a domain name, not an IP address`}},
		{name: "scheme", row: "go.example.com,k,javascript:alert(1),,,,", want: []string{"url must be an absolute http or https URL with a host"}, secret: "alert"},
		{name: "user-info", row: "go.example.com,k,https://bob:hunter2@example.com/,,,,", want: []string{"url must not contain user-info"}, secret: "hunter2"},
		{name: "long password", row: "go.example.com,k,https://example.com/,," + strings.Repeat("p", 73) + ",,", want: []string{"password must not be greater than 72 bytes"}, secret: "ppp"},
		{name: "long tag", row: "go.example.com,k,https://example.com/," + strings.Repeat("t", 65) + ",,,", want: []string{"must not be greater than 64 characters"}},
		{name: "too many tags", row: "go.example.com,k,https://example.com/," + manyTags(33) + ",,,", want: []string{"tags must not have more than 32 items"}},
		{name: "bad expiry", row: "go.example.com,k,https://example.com/,,,next week,", want: []string{`expires_at: "next week" is not a date-time`}},
		{name: "expiry before 1970", row: "go.example.com,k,https://example.com/,,,1969-12-31T00:00:00Z,", want: []string{"expires_at"}},
		{name: "bad external id", row: "go.example.com,k,https://example.com/,,,,x1", want: []string{`external_id "x1" is not an integer`}},
		{name: "negative external id", row: "go.example.com,k,https://example.com/,,,,-1", want: []string{"external_id must be at least 0"}},
		{name: "every reason", row: "go.example.com,a.b,ftp://example.com/,,,never,", want: []string{"key", "url", "expires_at"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r, err := Parse([]byte(header+tt.row+"\n"), DefaultOptions())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(r.Links).To(BeEmpty())
			g.Expect(r.Invalid).To(HaveLen(1))
			g.Expect(r.Invalid[0].At).To(Equal("line 2"))
			for _, w := range tt.want {
				g.Expect(r.Invalid[0].Reason).To(ContainSubstring(w))
			}
			if tt.secret != "" {
				g.Expect(r.Invalid[0].Reason).NotTo(ContainSubstring(tt.secret))
			}
		})
	}
}

func TestDuplicateDomainAndKey(t *testing.T) {
	g := NewWithT(t)
	// The same address twice, once through --map-domain: the first wins.
	src := "domain,key,url\ngo.example.com,k,https://a.example/\nold.example,k,https://b.example/\ngo.example.com,K,https://c.example/\n"
	o := DefaultOptions()
	o.DomainMap = map[string]string{"old.example": "go.example.com"}
	r, err := Parse([]byte(src), o)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Links).To(HaveLen(2), "keys are case-sensitive: k and K are two links")
	g.Expect(r.Invalid).To(ConsistOf(Problem{At: "line 3", Reason: "go.example.com/k is already the link of line 2"}))
}

func TestKurzCSVWithoutDomainColumn(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	o.Domain = "go.example.com"
	r, err := Parse([]byte("key,url\ndocs,https://example.com/\n"), o)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Format).To(Equal(FormatCSV))
	g.Expect(r.Links).To(Equal([]Link{{At: "line 2", Domain: "go.example.com", Key: "docs", URL: "https://example.com/"}}))
}

func TestUnreadableSources(t *testing.T) {
	tests := []struct {
		name, src string
		format    Format
		want      string
	}{
		{name: "empty", src: " \n", want: "the source is empty"},
		{name: "unknown header", src: "a,b\n1,2\n", want: `the CSV header "a,b" is no format kurz reads`},
		{name: "unknown column", src: "domain,key,url,utm_sorce\n", format: FormatCSV, want: `unknown column "utm_sorce"`},
		{name: "no url column", src: "domain,key\n", format: FormatCSV, want: "no url column"},
		{name: "column twice", src: "key,url,key\n", format: FormatCSV, want: `column "key" appears twice`},
		{name: "short row", src: "domain,key,url\ngo.example.com,k\n", want: "line 2"},
		{name: "bad JSON", src: `{"shortUrls": {"data": [}`, want: "read JSON"},
		{name: "unknown JSON", src: `{"items": []}`, want: "no export format kurz reads"},
		{name: "empty list", src: `[]`, want: "pass --format"},
		{name: "forced format that does not fit", src: `{"links": []}`, format: FormatShlinkJSON, want: `has no "shortUrls.data"`},
		{name: "YOURLS table without url", src: "keyword,title\nk,t\n", format: FormatYOURLSCSV, want: "needs keyword and url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			if tt.format != "" {
				o.Format = tt.format
			}
			_, err := Parse([]byte(tt.src), o)
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}

func TestCSVDelimitersAndBOM(t *testing.T) {
	g := NewWithT(t)
	for _, src := range []string{
		"\xef\xbb\xbfdomain;key;url\ngo.example.com;k;https://example.com/a,b\n",
		"domain\tkey\turl\ngo.example.com\tk\thttps://example.com/a,b\n",
	} {
		r, err := Parse([]byte(src), DefaultOptions())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(r.Links).To(HaveLen(1))
		g.Expect(r.Links[0].URL).To(Equal("https://example.com/a,b"))
	}
}

func TestReport(t *testing.T) {
	g := NewWithT(t)
	r := &Result{
		Links:   make([]Link, 3),
		Skipped: []Problem{{At: "item 4", Reason: "banned in Kutt"}},
		Dropped: map[Drop]int{{"title", whyTitle}: 2, {"clicks", whyAnalytics}: 3},
	}
	var b bytes.Buffer
	r.WriteReport(&b)
	g.Expect(b.String()).To(Equal("Left out on purpose: 1 record\n  item 4: banned in Kutt\n" +
		"Not carried over (kurz has no place for them), per source field:\n" +
		"  clicks       3 links  (analytics stay in the source)\n" +
		"  title        2 links  (kurz keeps no title or description)\n"))

	b.Reset()
	(&Result{Links: make([]Link, 2)}).WriteReport(&b)
	g.Expect(b.String()).To(Equal("Every field of the 2 links carried over.\n"))
}

func TestOptionsValidate(t *testing.T) {
	optionstest.Validate(t, DefaultOptions, []optionstest.Case[Options]{
		{Name: "every format", Edit: func(o *Options) { o.Format = FormatDubCSV }},
		{Name: "unknown format", Edit: func(o *Options) { o.Format = "excel" }, Error: "--format"},
		{Name: "domain", Edit: func(o *Options) { o.Domain = "Go.Example.com" }},
		{Name: "bad domain", Edit: func(o *Options) { o.Domain = "not a domain" }, Error: "--domain"},
		{Name: "bad map", Edit: func(o *Options) { o.DomainMap = map[string]string{"bit.ly": "1.2.3.4"} }, Error: "--map-domain bit.ly=1.2.3.4"},
	})
	g := NewWithT(t)
	o := DefaultOptions()
	g.Expect(optionstest.Parse(&o, "--format", "kutt-json", "--domain", "go.example.com", "--map-domain", "Bit.ly=GO.example.com", "--map-domain", "kutt.it=k.example.com", "--skip-invalid")).To(Succeed())
	g.Expect(o).To(Equal(Options{Format: FormatKuttJSON, Domain: "go.example.com", SkipInvalid: true,
		DomainMap: map[string]string{"bit.ly": "go.example.com", "kutt.it": "k.example.com"}}))
	g.Expect(optionstest.Parse(&o, "--map-domain", "bit.ly")).To(MatchError(ContainSubstring("OLD=NEW")))
}

// manyTags returns n distinct tags joined with '|'.
func manyTags(n int) string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = "t" + strconv.Itoa(i)
	}
	return strings.Join(tags, "|")
}
