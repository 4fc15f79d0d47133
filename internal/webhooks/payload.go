package webhooks

import (
	"encoding/json"
	"time"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/restapi"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

// PayloadVersion is the one payload version (spec.payloadVersion). v1
// only ever gains fields; a change that removes or retypes one is a new
// version, sent to the Webhooks that ask for it.
const PayloadVersion = "v1"

// envelope is the JSON body of every delivery, in the Standard Webhooks
// shape: type, timestamp (when the event happened, not when it is sent)
// and data, plus the payload's version.
type envelope struct {
	Type      kurzv1alpha1.WebhookEvent `json:"type"`
	Timestamp string                    `json:"timestamp"`
	Version   string                    `json:"version"`
	Data      any                       `json:"data"`
}

// changeBody is the JSON body of c: data is the API's link or domain
// object (the same as GET /api/v1/links/{id} answers), with workspaceID
// the namespace's uid.
func changeBody(c Change, workspaceID string) ([]byte, error) {
	var data any
	if c.Link != nil {
		data = restapi.LinkObject(c.Link, workspaceID)
	} else {
		data = restapi.DomainObject(c.Domain, workspaceID)
	}
	return json.Marshal(envelope{Type: c.Type, Timestamp: formatTime(c.Time), Version: PayloadVersion, Data: data})
}

// formatTime prints t as the API prints its times.
func formatTime(t time.Time) string { return t.UTC().Format(timestamps.Format) }

// clicksData is link.clicked's data: the clicks of one batch, each with
// its link, oldest first.
type clicksData struct {
	Clicks []clickView `json:"clicks"`
}

// clickView is one click in a link.clicked payload: when, which link, and
// the analytics dimensions; never the visitor's address or anything that
// identifies the visitor. Unknown dimensions are null. count is how many
// identical clicks in that second it stands for (1 unless the capture
// aggregated them).
type clickView struct {
	Timestamp   string    `json:"timestamp"`
	Count       int64     `json:"count"`
	Link        clickLink `json:"link"`
	Device      string    `json:"device"`
	OS          *string   `json:"os"`
	Browser     *string   `json:"browser"`
	Country     *string   `json:"country"`
	City        *string   `json:"city"`
	Referrer    *string   `json:"referrer"`
	UTMSource   *string   `json:"utm_source"`
	UTMMedium   *string   `json:"utm_medium"`
	UTMCampaign *string   `json:"utm_campaign"`
}

// clickLink is the link of a click: enough to find it in the API.
type clickLink struct {
	ID     string `json:"id"`
	Domain string `json:"domain"`
	Key    string `json:"key"`
	Link   string `json:"link"`
}

func newClickView(e *analytics.Event) clickView {
	return clickView{
		Timestamp: formatTime(e.Time),
		Count:     max(e.Clicks, 1),
		Link: clickLink{
			ID: e.Link.UID, Domain: e.Link.Domain, Key: e.Link.Key,
			Link: "https://" + e.Link.Domain + "/" + e.Link.Key,
		},
		Device: e.Device.String(), OS: orNull(e.OS), Browser: orNull(e.Browser), Country: orNull(e.Country),
		City:      orNull(e.City),
		Referrer:  orNull(e.Referrer),
		UTMSource: orNull(e.UTMSource), UTMMedium: orNull(e.UTMMedium), UTMCampaign: orNull(e.UTMCampaign),
	}
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// clicksBody is the JSON body of a link.clicked batch; its timestamp is
// the first click's.
func clicksBody(batch []analytics.Event) ([]byte, error) {
	views := make([]clickView, len(batch))
	for i := range batch {
		views[i] = newClickView(&batch[i])
	}
	return json.Marshal(envelope{
		Type: kurzv1alpha1.EventLinkClicked, Timestamp: formatTime(batch[0].Time),
		Version: PayloadVersion, Data: clicksData{Clicks: views},
	})
}
