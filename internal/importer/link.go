package importer

import (
	"fmt"
	"time"
)

// Link is one short link read from a source, in kurz's terms: the fields of
// the API's link body (and of a Link's spec). An empty string is a field the
// source does not set.
type Link struct {
	// At says where the link is in the source ("line 12", "links[3]"), for
	// messages.
	At string

	Domain, Key, URL   string
	IOS, Android       string
	UTMSource          string
	UTMMedium          string
	UTMCampaign        string
	UTMTerm            string
	UTMContent         string
	UTMName            string
	ExternalID         *int64
	Password           string // plaintext, never a hash: no source exports bcrypt hashes
	ExpiresAt          *time.Time
	ExpiredRedirectURL string
	Tags               []string

	// Dropped lists what the source had for this link that kurz cannot keep.
	Dropped []Drop

	// problems are what the parser could not read (a bad date, a password it
	// does not have); check makes the link invalid with them.
	problems []string
	// skip, when set, says why the link is deliberately left out (banned or
	// disabled in the source): reported, never an error.
	skip string
}

// Drop is a source field whose value cannot carry over, with the reason
// shown in the report.
type Drop struct {
	Field string
	Why   string
}

// Reasons shared by several formats.
const (
	whyAnalytics = "analytics stay in the source"
	whyCreated   = "kurz stamps its own creation time"
	whyTitle     = "kurz keeps no title or description"
	whyArchived  = "kurz has no archive: the link is imported active"
	whyPreview   = "kurz has no custom link previews"
)

// drop records that field's value cannot carry over.
func (l *Link) drop(field, why string) {
	l.Dropped = append(l.Dropped, Drop{Field: field, Why: why})
}

// problem makes the link invalid with a reason.
func (l *Link) problem(format string, args ...any) {
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
}
