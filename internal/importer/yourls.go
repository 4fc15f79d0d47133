package importer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// YOURLS has no export of its own; what it documents are its API and its
// table. Read from YOURLS 1.10.4 (github.com/YOURLS/YOURLS at
// b8c7882e34309aab63ac0361b4df19ea5dce6392):
//
//   - yourls-json: the answer to yourls-api.php?action=stats&filter=last&
//     limit=N&format=json (https://yourls.org/docs/guide/advanced/api;
//     includes/functions.php, yourls_get_stats): {"links": {"link_1":
//     {"shorturl", "url", "title", "timestamp", "ip", "clicks"}, ...},
//     "stats": {...}}. shorturl is YOURLS_SITE/keyword: its host is the
//     domain, its last path segment the key.
//   - yourls-csv: the yourls_url table exported as CSV with a header
//     (phpMyAdmin, `mysql --batch`), columns as created by
//     includes/functions-install.php: keyword, url, title, timestamp, ip,
//     clicks. It names no domain: pass --domain.
//
// YOURLS has no passwords, expiry, tags or device targets without plugins.

// yourlsLink is one link of the stats answer; clicks is a string there
// (straight from the database row).
type yourlsLink struct {
	ShortURL  string `json:"shorturl"`
	URL       string `json:"url"`
	Title     text   `json:"title"`
	Timestamp text   `json:"timestamp"`
	IP        text   `json:"ip"`
	Clicks    text   `json:"clicks"`
}

func parseYOURLSJSON(values []json.RawMessage) ([]Link, error) {
	var links []Link
	for vi, v := range values {
		var answer struct {
			Links map[string]yourlsLink `json:"links"`
		}
		if err := json.Unmarshal(v, &answer); err != nil {
			return nil, fmt.Errorf("JSON value %d: %w", vi+1, err)
		}
		// PHP writes link_1 ... link_N as an object: keep that order.
		names := make([]string, 0, len(answer.Links))
		for name := range answer.Links {
			names = append(names, name)
		}
		slices.SortFunc(names, func(a, b string) int {
			na, _ := strconv.Atoi(strings.TrimPrefix(a, "link_"))
			nb, _ := strconv.Atoi(strings.TrimPrefix(b, "link_"))
			return cmp.Or(cmp.Compare(na, nb), cmp.Compare(a, b))
		})
		for _, name := range names {
			y := answer.Links[name]
			l := Link{At: "links." + name, URL: y.URL}
			if len(values) > 1 {
				l.At = fmt.Sprintf("answer %d links.%s", vi+1, name)
			}
			domain, p, err := splitShortURL(y.ShortURL)
			if err != nil {
				l.problem("%v", err)
			}
			// YOURLS_SITE may have a path (https://example.com/s): the
			// keyword is the last segment.
			l.Domain, l.Key = domain, path.Base("/"+p)
			if l.Key == "/" {
				l.Key = ""
			}
			yourlsDrops(&l, y.Title, y.Timestamp, y.IP, y.Clicks)
			links = append(links, l)
		}
	}
	return links, nil
}

func parseYOURLSCSV(t *table) ([]Link, error) {
	col := func(name string) int { return t.index(looseName, name) }
	keyword, url := col("keyword"), col("url")
	if keyword < 0 || url < 0 {
		return nil, fmt.Errorf("a YOURLS table needs keyword and url columns, the header is %q", strings.Join(t.header, ","))
	}
	title, timestamp, ip, clicks := col("title"), col("timestamp"), col("ip"), col("clicks")
	links := make([]Link, 0, len(t.rows))
	for i, row := range t.rows {
		l := Link{At: t.at(i), Key: row[keyword], URL: row[url]}
		yourlsDrops(&l, text(cell(row, title)), text(cell(row, timestamp)), text(cell(row, ip)), text(cell(row, clicks)))
		links = append(links, l)
	}
	return links, nil
}

// yourlsDrops records the YOURLS fields kurz has no place for.
func yourlsDrops(l *Link, title, timestamp, ip, clicks text) {
	if title.set() {
		l.drop("title", whyTitle)
	}
	if timestamp.set() {
		l.drop("timestamp", whyCreated)
	}
	if ip.set() {
		l.drop("ip", "the creator's address is not kept")
	}
	if clicks.set() {
		l.drop("clicks", whyAnalytics)
	}
}
