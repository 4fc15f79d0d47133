package restapi

import (
	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

// linkView is the contract's link object. Every field is always present;
// unset optional fields are null.
type linkView struct {
	ID                 string   `json:"id"`
	WorkspaceID        string   `json:"workspace_id"`
	Domain             string   `json:"domain"`
	Key                string   `json:"key"`
	URL                string   `json:"url"`
	Link               string   `json:"link"`
	IOS                *string  `json:"ios"`
	Android            *string  `json:"android"`
	UTMSource          *string  `json:"utm_source"`
	UTMMedium          *string  `json:"utm_medium"`
	UTMCampaign        *string  `json:"utm_campaign"`
	UTMTerm            *string  `json:"utm_term"`
	UTMContent         *string  `json:"utm_content"`
	UTMName            *string  `json:"utm_name"`
	Clicks             int64    `json:"clicks"`
	LastClick          *int64   `json:"last_click"`
	ExternalID         *int64   `json:"external_id"`
	Password           *int     `json:"password"`
	ExpiresAt          *string  `json:"expires_at"`
	ExpiredRedirectURL *string  `json:"expired_redirect_url"`
	Tags               []string `json:"tags"`
	CreatedAt          string   `json:"created_at"`
	UpdatedAt          string   `json:"updated_at"`
	// State and StateReason are kurz's additions (the contract shows no
	// link states): see linkState.
	State       string  `json:"state"`
	StateReason *string `json:"state_reason"`
}

// newLinkView renders l; it only reads l, so cache objects are fine.
func newLinkView(l *kurzv1alpha1.Link, workspaceID string) linkView {
	v := linkView{
		ID:                 string(l.UID),
		WorkspaceID:        workspaceID,
		Domain:             string(l.Spec.Domain),
		Key:                l.Spec.Key,
		URL:                string(l.Spec.URL),
		Link:               l.ShortURL(),
		IOS:                urlString(l.Spec.IOS),
		Android:            urlString(l.Spec.Android),
		Clicks:             l.Status.Clicks,
		ExternalID:         l.Spec.ExternalID,
		ExpiredRedirectURL: urlString(l.Spec.ExpiredRedirectURL),
		Tags:               l.Spec.Tags,
		CreatedAt:          linkCreatedAt(l).UTC().Format(timestamps.Format),
		UpdatedAt:          linkUpdatedAt(l).UTC().Format(timestamps.Format),
	}
	if u := l.Spec.UTM; u != nil {
		v.UTMSource, v.UTMMedium, v.UTMCampaign = u.Source, u.Medium, u.Campaign
		v.UTMTerm, v.UTMContent, v.UTMName = u.Term, u.Content, u.Name
	}
	if t := l.Status.LastClickTime; t != nil {
		sec := t.Unix()
		v.LastClick = &sec
	}
	if l.Spec.PasswordHash != nil {
		// The contract types password as integer-or-null: 1 says "protected"
		// without giving away anything about the hash.
		one := 1
		v.Password = &one
	}
	if t := l.Spec.ExpiresAt; t != nil {
		s := t.UTC().Format(timestamps.Format)
		v.ExpiresAt = &s
	}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	v.State, v.StateReason = linkState(l)
	return v
}

func urlString(u *kurzv1alpha1.URL) *string {
	if u == nil {
		return nil
	}
	s := string(*u)
	return &s
}
