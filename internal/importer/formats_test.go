package importer

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func at(s string) *time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	t = t.UTC()
	return &t
}

func id(n int64) *int64 { return &n }

// drops builds Result.Dropped from field, why and count triples.
type dropped map[string]int

// TestFormats reads a sample of every format, written for this test from
// where the format is documented (named in each case and in the format's
// file), and checks the links, what is left out and what cannot carry
// over.
func TestFormats(t *testing.T) {
	tests := []struct {
		name, file string
		opts       func(*Options)
		format     Format
		links      []Link
		invalid    []string // At of each invalid record
		skipped    []string // At of each skipped record
		dropped    dropped  // field -> links
	}{
		{
			// docs/import.md, "kurz's CSV".
			name: "kurz CSV", file: "kurz.csv", format: FormatCSV,
			links: []Link{
				{At: "line 2", Domain: "go.example.com", Key: "docs", URL: "https://docs.example.com/start", Tags: []string{"docs", "onboarding"}},
				{At: "line 3", Domain: "go.example.com", Key: "Summer_Sale", URL: "https://shop.example.com/sale?x=1",
					Tags: []string{"sales", "q3"}, Password: "s3cret pass", ExpiresAt: at("2026-09-30T21:59:59Z"),
					UTMSource: "newsletter", UTMMedium: "email", UTMCampaign: "summer", UTMTerm: "shoes", UTMContent: "banner", UTMName: "summer-2026",
					IOS: "https://apps.apple.com/app/id1", Android: "https://play.google.com/store/apps/details?id=x",
					ExternalID: id(42), ExpiredRedirectURL: "https://shop.example.com/over"},
				{At: "line 4", Domain: "go.example.com", Key: "q", URL: "https://example.com/search?q=a,b", ExpiresAt: at("2027-01-01T00:00:00Z")},
			},
		},
		{
			// YOURLS 1.10.4: yourls-api.php?action=stats&filter=last&format=json,
			// includes/functions.php yourls_get_stats; https://yourls.org/docs/guide/advanced/api.
			name: "YOURLS API stats", file: "yourls-stats.json", format: FormatYOURLSJSON,
			links: []Link{
				{At: "links.link_1", Domain: "sho.rt", Key: "news", URL: "https://example.com/news?id=1"},
				{At: "links.link_2", Domain: "sho.rt", Key: "a1", URL: "https://example.com/"},
				{At: "links.link_3", Domain: "example.org", Key: "Promo", URL: "https://shop.example.com/promo"},
			},
			dropped: dropped{"title": 2, "timestamp": 3, "ip": 3, "clicks": 2},
		},
		{
			// YOURLS 1.10.4: the yourls_url table of includes/functions-install.php, as CSV.
			name: "YOURLS table", file: "yourls_url.csv", format: FormatYOURLSCSV,
			opts: func(o *Options) { o.Domain = "Go.Example.com" },
			links: []Link{
				{At: "line 2", Domain: "go.example.com", Key: "news", URL: "https://example.com/news?id=1"},
				{At: "line 3", Domain: "go.example.com", Key: "a1", URL: "https://example.com/"},
			},
			dropped: dropped{"title": 1, "timestamp": 2, "ip": 2, "clicks": 1},
		},
		{
			// shlinkio/shlink docs/swagger: paths/v1_short-urls.json (the list's
			// example) and definitions/ShortUrl.json; page 2 in the 3.7 shape
			// (deviceLongUrls, visitsCount).
			name: "Shlink API pages", file: "shlink-short-urls.json", format: FormatShlinkJSON,
			links: []Link{
				{At: "page 1 item 1", Domain: "s.test", Key: "12C18", URL: "https://store.steampowered.com", Tags: []string{"games", "tech"}},
				{At: "page 1 item 2", Domain: "example.com", Key: "docs", URL: "https://shlink.io/documentation", ExpiresAt: at("2029-12-31T23:00:00Z")},
				{At: "page 2 item 1", Domain: "s.test", Key: "app", URL: "https://example.com/app", Tags: []string{"app"},
					IOS: "https://apps.apple.com/app/id123", Android: "https://play.google.com/store/apps/details?id=com.example"},
			},
			dropped: dropped{"title": 1, "dateCreated": 3, "visits": 2, "meta.validSince": 1, "meta.maxVisits": 1,
				"crawlable": 1, "forwardQuery=false": 1, "redirect rules": 1},
		},
		{
			// shlinkio/shlink-web-component ExportShortUrlsBtn.tsx (json2csv).
			name: "Shlink web client export", file: "short_urls.csv", format: FormatShlinkCSV,
			links: []Link{
				{At: "line 2", Domain: "s.test", Key: "12C18", URL: "https://store.steampowered.com", Tags: []string{"games", "tech"}},
				{At: "line 3", Domain: "example.com", Key: "docs", URL: "https://shlink.io/documentation"},
			},
			dropped: dropped{"title": 1, "createdAt": 2, "visits": 1},
		},
		{
			// shlinkio/shlink-importer src/Sources/Csv/CsvImporter.php.
			name: "shlink-importer CSV", file: "shlink-importer.csv", format: FormatShlinkCSV,
			opts: func(o *Options) { o.Domain = "s.example.com" },
			links: []Link{
				{At: "line 2", Domain: "go.example.com", Key: "a", URL: "https://example.com/a", Tags: []string{"one", "two"}},
				{At: "line 3", Domain: "s.example.com", Key: "b", URL: "https://example.com/b", Tags: []string{"three", "four"}},
			},
			dropped: dropped{"title": 1},
		},
		{
			// thedevs-network/kutt v3.2.3: docs/api/api.js (GET /api/v2/links),
			// server/utils/utils.js sanitize.link.
			name: "Kutt API page", file: "kutt-links.json", format: FormatKuttJSON,
			links: []Link{
				{At: "item 1", Domain: "go.example.com", Key: "promo", URL: "https://example.com/promo", ExpiresAt: at("2030-06-01T00:00:00Z")},
				{At: "item 2", Domain: "kutt.it", Key: "x7Yz2", URL: "https://example.org/", ExpiresAt: at("2031-01-01T00:00:00Z")},
			},
			invalid: []string{"item 3"}, // password-protected: Kutt exports no password
			skipped: []string{"item 4"}, // banned
			dropped: dropped{"description": 1, "visit_count": 1, "created_at": 2},
		},
		{
			// https://dev.bitly.com/api-reference/#getBitlinksByGroup; addresses as
			// shlink-importer's BitlyApiImporter.php picks them.
			name: "Bitly API page", file: "bitly-bitlinks.json", format: FormatBitlyJSON,
			opts: func(o *Options) { o.DomainMap = map[string]string{"bit.ly": "go.example.com"} },
			links: []Link{
				{At: "item 1", Domain: "go.example.com", Key: "3abcDEF", URL: "https://example.com/article", Tags: []string{"blog"}},
				{At: "item 2 custom_bitlinks[0]", Domain: "go.brand.com", Key: "launch", URL: "https://example.com/launch"},
				{At: "item 2 custom_bitlinks[1]", Domain: "go.brand.com", Key: "Launch2024", URL: "https://example.com/launch"},
			},
			dropped: dropped{"title": 1, "archived": 2, "created_at": 3, "deeplinks": 2, "link (beside custom_bitlinks)": 1},
		},
		{
			// dubinc/dub apps/web/lib/zod/schemas/links.ts, LinkSchema (GET /api/links).
			name: "Dub API list", file: "dub-links.json", format: FormatDubJSON,
			links: []Link{
				{At: "item 1", Domain: "dub.sh", Key: "launch", URL: "https://example.com/launch",
					IOS: "https://apps.apple.com/app/id1", Android: "https://play.google.com/store/apps/details?id=x",
					UTMSource: "twitter", UTMMedium: "social", UTMCampaign: "launch", ExternalID: id(12345),
					Password: "hunter2", ExpiresAt: at("2030-01-01T00:00:00Z"), ExpiredRedirectURL: "https://example.com/expired",
					Tags: []string{"launch", "q3"}},
				{At: "item 2", Domain: "dub.sh", Key: "crm", URL: "https://example.com/crm"},
			},
			skipped: []string{"item 3", "item 4"}, // the root link, a disabled one
			dropped: dropped{"geo": 1, "title": 1, "description": 1, "image": 1, "proxy": 1, "folderId": 1,
				"clicks": 1, "leads": 1, "conversions": 1, "sales": 1, "saleAmount": 1, "lastClicked": 1, "createdAt": 2,
				"externalId (not an integer)": 1, "archived": 1, "comments": 1},
		},
		{
			// dubinc/dub apps/web/app/api/links/export/route.ts, exportLinksColumns,
			// convert-to-csv.ts (the formula quote before '-draft').
			name: "Dub export", file: "dub-export.csv", format: FormatDubCSV,
			links: []Link{
				{At: "line 2", Domain: "dub.sh", Key: "launch", URL: "https://example.com/launch", Tags: []string{"launch", "q3"}},
				{At: "line 3", Domain: "dub.sh", Key: "docs", URL: "https://example.com/docs?a=1&b=2", Tags: []string{"-draft", "docs"}},
			},
			skipped: []string{"line 4"}, // https://dub.sh, the root link
			dropped: dropped{"Clicks": 1, "Leads": 1, "Conversions": 1, "Revenue": 1, "Created at": 2, "Archived": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(Detect(data)).To(Equal(tt.format), "detected from the header or the JSON's shape")

			o := DefaultOptions()
			if tt.opts != nil {
				tt.opts(&o)
			}
			for _, forced := range []Format{FormatAuto, tt.format} {
				o.Format = forced
				r, err := Parse(data, o)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(r.Format).To(Equal(tt.format))

				got := make([]Link, len(r.Links))
				for i, l := range r.Links {
					l.Dropped = nil // counted below
					got[i] = l
				}
				g.Expect(got).To(Equal(tt.links))
				g.Expect(problemsAt(r.Invalid)).To(Equal(tt.invalid), "invalid: %v", r.Invalid)
				g.Expect(problemsAt(r.Skipped)).To(Equal(tt.skipped), "skipped: %v", r.Skipped)

				counts := dropped{}
				for d, n := range r.Dropped {
					g.Expect(d.Why).NotTo(BeEmpty(), d.Field)
					counts[d.Field] += n
				}
				if tt.dropped == nil {
					tt.dropped = dropped{}
				}
				g.Expect(counts).To(Equal(tt.dropped))
			}
		})
	}
}

func problemsAt(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.At)
	}
	return out
}
