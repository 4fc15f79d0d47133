package importer

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Shlink, read from its own repositories:
//
//   - shlink-json: pages of GET /rest/v3/short-urls, {"shortUrls": {"data":
//     [ShortUrl, ...], "pagination": {...}}}, or a bare list of ShortUrl
//     (jq '.shortUrls.data'). ShortUrl as documented in shlinkio/shlink's
//     docs/swagger/definitions/ShortUrl.json and ShortUrlMeta.json at
//     59c62a2cccd80c974cae7764e5aae7927f793d35 (main after v5.0.2):
//     shortCode, shortUrl, longUrl, dateCreated, visitsSummary, tags,
//     meta {validSince, validUntil, maxVisits}, domain (null: the default
//     domain, the host of shortUrl), title, crawlable, forwardQuery,
//     hasRedirectRules. Shlink 3.5 to 3.7 also answered deviceLongUrls
//     {android, ios, desktop} and visitsCount (same file at v3.7.0,
//     c80ec54508a78a171ed0aafd91c41c7b5a0afd60): read when present.
//   - shlink-csv: the web client's "Export" of the short URLs list
//     (shlinkio/shlink-web-component src/short-urls/helpers/
//     ExportShortUrlsBtn.tsx at f7902064d4113c9de12e8b3e69e26aaf3c50c790):
//     createdAt, domain, shortCode, shortUrl, longUrl, title, tags (joined
//     with '|'), visits. The CSV shlink-importer reads (shlinkio/
//     shlink-importer src/Sources/Csv/CsvImporter.php at
//     68e7def2958150df62f7b2ce2c39c1512cc85c60: headers compared lowercase
//     without spaces, tags split on ',' when there is one, else '|',
//     shortCode and domain taken from shortUrl when absent) is read the
//     same way; an empty domain is shortUrl's host, else --domain.
//
// Shlink has no passwords. validUntil is the expiry.

type shlinkShortURL struct {
	ShortCode     string   `json:"shortCode"`
	ShortURL      string   `json:"shortUrl"`
	LongURL       string   `json:"longUrl"`
	DateCreated   text     `json:"dateCreated"`
	Tags          []string `json:"tags"`
	Domain        *string  `json:"domain"`
	Title         text     `json:"title"`
	Crawlable     bool     `json:"crawlable"`
	ForwardQuery  *bool    `json:"forwardQuery"`
	HasRules      bool     `json:"hasRedirectRules"`
	VisitsCount   text     `json:"visitsCount"`
	VisitsSummary *struct {
		Total text `json:"total"`
	} `json:"visitsSummary"`
	Meta struct {
		ValidSince text `json:"validSince"`
		ValidUntil text `json:"validUntil"`
		MaxVisits  text `json:"maxVisits"`
	} `json:"meta"`
	DeviceLongURLs *struct {
		Android text `json:"android"`
		IOS     text `json:"ios"`
		Desktop text `json:"desktop"`
	} `json:"deviceLongUrls"`
}

func parseShlinkJSON(values []json.RawMessage) ([]Link, error) {
	items, at, err := listOrPages[shlinkShortURL](values, "shortUrls", "data")
	if err != nil {
		return nil, err
	}
	links := make([]Link, 0, len(items))
	for i, s := range items {
		l := Link{At: at[i], Key: s.ShortCode, URL: s.LongURL, Tags: s.Tags}
		if s.Domain != nil && *s.Domain != "" {
			l.Domain = *s.Domain
		} else if domain, _, err := splitShortURL(s.ShortURL); err == nil {
			l.Domain = domain
		} else {
			l.problem("no domain: %v", err)
		}
		if s.Meta.ValidUntil.set() {
			if l.ExpiresAt, err = parseTime(string(s.Meta.ValidUntil)); err != nil {
				l.problem("meta.validUntil: %v", err)
			}
		}
		if d := s.DeviceLongURLs; d != nil {
			l.IOS, l.Android = string(d.IOS), string(d.Android)
			if d.Desktop.set() {
				l.drop("deviceLongUrls.desktop", "kurz targets iOS and Android only; desktop visitors get url")
			}
		}
		visits := s.VisitsCount
		if s.VisitsSummary != nil {
			visits = s.VisitsSummary.Total
		}
		shlinkDrops(&l, s.Title, s.DateCreated, visits, "dateCreated")
		if s.Meta.ValidSince.set() {
			l.drop("meta.validSince", "kurz links serve from their creation")
		}
		if s.Meta.MaxVisits.set() {
			l.drop("meta.maxVisits", "kurz has no visit limit")
		}
		if s.Crawlable {
			l.drop("crawlable", "kurz serves no robots.txt allow-list")
		}
		if s.ForwardQuery != nil && !*s.ForwardQuery {
			l.drop("forwardQuery=false", "kurz always forwards the query string")
		}
		if s.HasRules {
			l.drop("redirect rules", "the list does not hold them; kurz targets iOS and Android only (set ios/android)")
		}
		links = append(links, l)
	}
	return links, nil
}

func parseShlinkCSV(t *table) ([]Link, error) {
	col := func(name string) int { return t.index(looseName, name) }
	longURL := col("longurl")
	shortCode, shortURL, domain := col("shortcode"), col("shorturl"), col("domain")
	if longURL < 0 || (shortCode < 0 && shortURL < 0) {
		return nil, fmt.Errorf("a Shlink CSV needs longUrl and shortCode or shortUrl columns, the header is %q", strings.Join(t.header, ","))
	}
	title, createdAt, visits, tags := col("title"), col("createdat"), col("visits"), col("tags")
	links := make([]Link, 0, len(t.rows))
	for i, row := range t.rows {
		l := Link{At: t.at(i), URL: row[longURL], Key: cell(row, shortCode), Domain: cell(row, domain)}
		if s := cell(row, shortURL); s != "" && (l.Key == "" || l.Domain == "") {
			d, k, err := splitShortURL(s)
			if err != nil {
				l.problem("%v", err)
			}
			if l.Key == "" {
				l.Key = k
			}
			if l.Domain == "" {
				l.Domain = d
			}
		}
		if raw := cell(row, tags); strings.Contains(raw, ",") {
			l.Tags = splitTags(raw, ",")
		} else {
			l.Tags = splitTags(raw, "|")
		}
		shlinkDrops(&l, text(cell(row, title)), text(cell(row, createdAt)), text(cell(row, visits)), "createdAt")
		links = append(links, l)
	}
	return links, nil
}

// shlinkDrops records the fields both Shlink formats share and kurz has no
// place for.
func shlinkDrops(l *Link, title, created, visits text, createdField string) {
	if title.set() {
		l.drop("title", whyTitle)
	}
	if created.set() {
		l.drop(createdField, whyCreated)
	}
	if visits.set() {
		l.drop("visits", whyAnalytics)
	}
}
