package importer

import (
	"encoding/json"
)

// Kutt, read from thedevs-network/kutt v3.2.3 (commit
// fc832d7e7243d5472714e17abfe84b908901e1a7): kutt-json is pages of
// GET /api/v2/links, {"total", "limit", "skip", "data": [link, ...]}, or a
// bare list of links (docs/api/api.js, schema Link; server/handlers/
// links.handler.js, get). A link is what server/utils/utils.js
// (sanitize.link) makes of the columns server/queries/link.queries.js
// selects: id (uuid), address (the key), target, description, banned,
// password (a boolean: whether one is set, never the password or its
// hash), expire_in, visit_count, created_at, updated_at, domain (null on
// the instance's default domain) and link (the short URL, whose host is
// then the domain).
//
// A password-protected link is invalid: Kutt does not export its
// password, and importing it unprotected would open it. A banned link is
// left out. expire_in carries over; a time without a zone (SQLite) is UTC.

type kuttLink struct {
	Address     string  `json:"address"`
	Target      string  `json:"target"`
	Description text    `json:"description"`
	Banned      bool    `json:"banned"`
	Password    bool    `json:"password"`
	ExpireIn    text    `json:"expire_in"`
	VisitCount  text    `json:"visit_count"`
	CreatedAt   text    `json:"created_at"`
	Domain      *string `json:"domain"`
	Link        string  `json:"link"`
}

func parseKuttJSON(values []json.RawMessage) ([]Link, error) {
	items, at, err := listOrPages[kuttLink](values, "data")
	if err != nil {
		return nil, err
	}
	links := make([]Link, 0, len(items))
	for i, k := range items {
		l := Link{At: at[i], Key: k.Address, URL: k.Target}
		if k.Domain != nil && *k.Domain != "" {
			l.Domain = *k.Domain
		} else if domain, _, err := splitShortURL(k.Link); err == nil {
			l.Domain = domain
		} else {
			l.problem("no domain: %v", err)
		}
		switch {
		case k.Banned:
			l.skip = "banned in Kutt"
		case k.Password:
			l.problem("protected by a password Kutt does not export (only that one is set): create it by hand, or remove \"password\": true to import it unprotected")
		}
		if k.ExpireIn.set() {
			if l.ExpiresAt, err = parseTime(string(k.ExpireIn)); err != nil {
				l.problem("expire_in: %v", err)
			}
		}
		if k.Description.set() {
			l.drop("description", whyTitle)
		}
		if k.VisitCount.set() {
			l.drop("visit_count", whyAnalytics)
		}
		if k.CreatedAt.set() {
			l.drop("created_at", whyCreated)
		}
		links = append(links, l)
	}
	return links, nil
}
