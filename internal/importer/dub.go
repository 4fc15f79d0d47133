package importer

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Dub, read from dubinc/dub at 1de955f782a72e1eff7b201ae54a909d5ceb5722
// (2026-08-21; the repository has no release tags):
//
//   - dub-json: pages of the API's list of links, GET
//     https://api.dub.co/links (apps/web/app/api/links/route.ts; API
//     reference https://dub.co/docs/api-reference/introduction), each a list
//     of Link objects as apps/web/lib/zod/schemas/links.ts (LinkSchema)
//     defines them and lib/api/links/utils/transform-link.ts shapes them: domain,
//     key, url, ios, android, utm_source..utm_content, externalId (a
//     string), password (the plaintext Dub keeps), expiresAt, expiredUrl,
//     tags [{id, name, color}], and fields kurz has no place for (geo,
//     link previews, folders, analytics...).
//   - dub-csv: the "Export links" CSV (apps/web/app/api/links/export/
//     route.ts): columns as labelled by exportLinksColumns in the same
//     schema file, "Short link", "Destination URL", "Clicks", "Created at"
//     by default and "Leads", "Conversions", "Revenue", "Link ID",
//     "Updated at", "Tags" (joined with ", "), "Archived" (Yes/No) when
//     chosen. The short link is https://domain/key (packages/utils/src/
//     functions/link-constructor.ts); apps/web/lib/analytics/utils/
//     convert-to-csv.ts prefixes values starting with = + - @ or a tab or
//     line break with a quote against spreadsheet formulas, which is
//     removed here. The export has no passwords or expiry.
//
// A disabled link (disabledAt) and a domain's root link (key _root, which
// kurz cannot hold: its keys are never empty) are left out.

type dubLink struct {
	Domain      string `json:"domain"`
	Key         string `json:"key"`
	URL         string `json:"url"`
	IOS         text   `json:"ios"`
	Android     text   `json:"android"`
	UTMSource   text   `json:"utm_source"`
	UTMMedium   text   `json:"utm_medium"`
	UTMCampaign text   `json:"utm_campaign"`
	UTMTerm     text   `json:"utm_term"`
	UTMContent  text   `json:"utm_content"`
	ExternalID  text   `json:"externalId"`
	Password    text   `json:"password"`
	ExpiresAt   text   `json:"expiresAt"`
	ExpiredURL  text   `json:"expiredUrl"`
	DisabledAt  text   `json:"disabledAt"`
	Tags        []struct {
		Name string `json:"name"`
	} `json:"tags"`
	Geo             map[string]string `json:"geo"`
	Title           text              `json:"title"`
	Description     text              `json:"description"`
	Image           text              `json:"image"`
	Video           text              `json:"video"`
	Proxy           bool              `json:"proxy"`
	Rewrite         bool              `json:"rewrite"`
	DoIndex         bool              `json:"doIndex"`
	FolderID        text              `json:"folderId"`
	Comments        text              `json:"comments"`
	Archived        bool              `json:"archived"`
	TrackConversion bool              `json:"trackConversion"`
	PublicStats     bool              `json:"publicStats"`
	TestVariants    []any             `json:"testVariants"`
	WebhookIDs      []string          `json:"webhookIds"`
	TenantID        text              `json:"tenantId"`
	ProgramID       text              `json:"programId"`
	PartnerID       text              `json:"partnerId"`
	Clicks          text              `json:"clicks"`
	Leads           text              `json:"leads"`
	Conversions     text              `json:"conversions"`
	Sales           text              `json:"sales"`
	SaleAmount      text              `json:"saleAmount"`
	LastClicked     text              `json:"lastClicked"`
	CreatedAt       text              `json:"createdAt"`
}

// dubRootKey is the key of a domain's root link in Dub.
const dubRootKey = "_root"

func parseDubJSON(values []json.RawMessage) ([]Link, error) {
	items, at, err := listOrPages[dubLink](values)
	if err != nil {
		return nil, err
	}
	links := make([]Link, 0, len(items))
	for i, d := range items {
		l := Link{
			At: at[i], Domain: d.Domain, Key: d.Key, URL: d.URL,
			IOS: string(d.IOS), Android: string(d.Android),
			UTMSource: string(d.UTMSource), UTMMedium: string(d.UTMMedium), UTMCampaign: string(d.UTMCampaign),
			UTMTerm: string(d.UTMTerm), UTMContent: string(d.UTMContent),
			Password: string(d.Password), ExpiredRedirectURL: string(d.ExpiredURL),
		}
		for _, t := range d.Tags {
			l.Tags = append(l.Tags, t.Name)
		}
		if d.ExpiresAt.set() {
			if l.ExpiresAt, err = parseTime(string(d.ExpiresAt)); err != nil {
				l.problem("expiresAt: %v", err)
			}
		}
		if d.ExternalID.set() {
			if n, err := strconv.ParseInt(string(d.ExternalID), 10, 64); err == nil && n >= 0 {
				l.ExternalID = &n
			} else {
				l.drop("externalId (not an integer)", "kurz's external_id is a non-negative integer")
			}
		}
		switch {
		case d.DisabledAt.set():
			l.skip = "disabled in Dub"
		case d.Key == dubRootKey:
			l.skip = "the root link of " + d.Domain + ": kurz keys are never empty (set the Domain's not_found_url instead)"
		}
		dubDrops(&l, d)
		links = append(links, l)
	}
	return links, nil
}

// dubDrops records the fields of a Dub link kurz has no place for.
func dubDrops(l *Link, d dubLink) {
	for _, f := range []struct {
		field string
		set   bool
		why   string
	}{
		{"geo", len(d.Geo) > 0, "kurz has no geo targeting"},
		{"title", d.Title.set(), whyPreview},
		{"description", d.Description.set(), whyPreview},
		{"image", d.Image.set(), whyPreview},
		{"video", d.Video.set(), whyPreview},
		{"proxy", d.Proxy, whyPreview},
		{"rewrite", d.Rewrite, "kurz redirects, it does not cloak links"},
		{"doIndex", d.DoIndex, "kurz has no per-link indexing setting"},
		{"folderId", d.FolderID.set(), "kurz has no folders; tags group links"},
		{"comments", d.Comments.set(), "kurz keeps no comments"},
		{"archived", d.Archived, whyArchived},
		{"trackConversion", d.TrackConversion, "kurz tracks no conversions"},
		{"publicStats", d.PublicStats, "kurz has no public stats pages"},
		{"testVariants", len(d.TestVariants) > 0, "kurz has no A/B tests"},
		{"webhookIds", len(d.WebhookIDs) > 0, "kurz has no per-link webhooks"},
		{"tenantId", d.TenantID.set(), "kurz has no tenants (a workspace is a namespace)"},
		{"programId", d.ProgramID.set(), "kurz has no partner programs"},
		{"partnerId", d.PartnerID.set(), "kurz has no partner programs"},
		{"clicks", d.Clicks.set(), whyAnalytics},
		{"leads", d.Leads.set(), whyAnalytics},
		{"conversions", d.Conversions.set(), whyAnalytics},
		{"sales", d.Sales.set(), whyAnalytics},
		{"saleAmount", d.SaleAmount.set(), whyAnalytics},
		{"lastClicked", d.LastClicked.set(), whyAnalytics},
		{"createdAt", d.CreatedAt.set(), whyCreated},
	} {
		if f.set {
			l.drop(f.field, f.why)
		}
	}
}

func parseDubCSV(t *table) ([]Link, error) {
	col := func(label string) int { return t.index(looseName, looseName(label)) }
	short, dest := col("Short link"), col("Destination URL")
	if short < 0 || dest < 0 {
		return nil, fmt.Errorf(`a Dub export needs "Short link" and "Destination URL" columns, the header is %q`, strings.Join(t.header, ","))
	}
	tags := col("Tags")
	drops := []struct {
		label, why string
		col        int
		set        func(v string) bool
	}{
		{"Clicks", whyAnalytics, col("Clicks"), func(v string) bool { return text(v).set() }},
		{"Leads", whyAnalytics, col("Leads"), func(v string) bool { return text(v).set() }},
		{"Conversions", whyAnalytics, col("Conversions"), func(v string) bool { return text(v).set() }},
		{"Revenue", whyAnalytics, col("Revenue"), func(v string) bool { return text(v).set() }},
		{"Created at", whyCreated, col("Created at"), func(v string) bool { return text(v).set() }},
		{"Archived", whyArchived, col("Archived"), func(v string) bool { return strings.EqualFold(v, "yes") }},
	}
	links := make([]Link, 0, len(t.rows))
	for i, row := range t.rows {
		l := Link{At: t.at(i), URL: dubCell(row, dest)}
		var err error
		if l.Domain, l.Key, err = splitShortURL(dubCell(row, short)); err != nil {
			l.problem("%v", err)
		} else if l.Key == "" {
			l.skip = "the root link of " + l.Domain + ": kurz keys are never empty (set the Domain's not_found_url instead)"
		}
		l.Tags = splitTags(dubCell(row, tags), ",")
		for _, d := range drops {
			if d.col >= 0 && d.set(strings.TrimSpace(row[d.col])) {
				l.drop(d.label, d.why)
			}
		}
		links = append(links, l)
	}
	return links, nil
}

// dubCell reads a cell of Dub's export, without the quote Dub puts before
// values a spreadsheet would take for a formula.
func dubCell(row []string, i int) string {
	v := cell(row, i)
	if len(v) > 1 && v[0] == '\'' && strings.ContainsRune("=+-@\t\r\n", rune(v[1])) {
		return v[1:]
	}
	return v
}
