package importer

import (
	"encoding/json"
	"fmt"
)

// Bitly: bitly-json is pages of the API v4's GET /v4/groups/{group_guid}/
// bitlinks (https://dev.bitly.com/api-reference/#getBitlinksByGroup),
// {"links": [BitlinkBody, ...], "pagination": {...}}, saved one after the
// other or as a list of pages, or a bare list of BitlinkBody. BitlinkBody:
// link (the bit.ly address), id, long_url, title, archived, created_at,
// created_by, client_id, custom_bitlinks (branded addresses of the same
// link), tags, deeplinks, references. Which address a link keeps follows
// shlinkio/shlink-importer's Bitly importer (src/Sources/Bitly/
// BitlyApiImporter.php at 68e7def2958150df62f7b2ce2c39c1512cc85c60):
// the custom bitlink when there is one, else link; kurz keeps every
// custom bitlink (each is an address people use), and reports the bit.ly
// address it then leaves out. Links without a long_url are left out, as
// there.
//
// Bitly's web CSV export is not documented with its columns, so it is not
// read: save the API's pages, or convert the CSV to kurz's CSV.
//
// Bitly exports no passwords or expiry. bit.ly itself cannot be served by
// kurz: move those links with --map-domain bit.ly=your.domain.

type bitlyLink struct {
	Link           string   `json:"link"`
	LongURL        string   `json:"long_url"`
	Title          text     `json:"title"`
	Archived       bool     `json:"archived"`
	CreatedAt      text     `json:"created_at"`
	CustomBitlinks []string `json:"custom_bitlinks"`
	Tags           []string `json:"tags"`
	Deeplinks      []any    `json:"deeplinks"`
}

func parseBitlyJSON(values []json.RawMessage) ([]Link, error) {
	pages, err := bitlyPages(values)
	if err != nil {
		return nil, err
	}
	items, at, err := listOrPages[bitlyLink](pages, "links")
	if err != nil {
		return nil, err
	}
	var links []Link
	for i, b := range items {
		addresses := b.CustomBitlinks
		if len(addresses) == 0 {
			addresses = []string{b.Link}
		}
		for j, address := range addresses {
			l := Link{At: at[i], URL: b.LongURL, Tags: b.Tags}
			if len(b.CustomBitlinks) > 0 {
				l.At = fmt.Sprintf("%s custom_bitlinks[%d]", at[i], j)
			}
			var err error
			if l.Domain, l.Key, err = splitShortURL(address); err != nil {
				l.problem("%v", err)
			}
			if b.LongURL == "" {
				l.skip = "no long_url"
			}
			if j == 0 && len(b.CustomBitlinks) > 0 && b.Link != "" {
				l.drop("link (beside custom_bitlinks)", "the bit.ly address of a branded link is not imported")
			}
			if b.Title.set() {
				l.drop("title", whyTitle)
			}
			if b.Archived {
				l.drop("archived", whyArchived)
			}
			if b.CreatedAt.set() {
				l.drop("created_at", whyCreated)
			}
			if len(b.Deeplinks) > 0 {
				l.drop("deeplinks", "kurz targets devices with URLs (ios, android), not app deep links")
			}
			links = append(links, l)
		}
	}
	return links, nil
}

// bitlyPages flattens values that are lists of pages into one page each.
func bitlyPages(values []json.RawMessage) ([]json.RawMessage, error) {
	var pages []json.RawMessage
	for vi, v := range values {
		var list []json.RawMessage
		if json.Unmarshal(v, &list) != nil || len(list) == 0 {
			pages = append(pages, v)
			continue
		}
		var first map[string]json.RawMessage
		if json.Unmarshal(list[0], &first) == nil && first["links"] != nil {
			pages = append(pages, list...) // a list of pages
			continue
		}
		if _, isLink := first["long_url"]; !isLink && first["link"] == nil {
			return nil, fmt.Errorf("JSON value %d is neither Bitly pages nor bitlinks", vi+1)
		}
		pages = append(pages, v) // a bare list of bitlinks
	}
	return pages, nil
}
