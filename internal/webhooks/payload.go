package webhooks

import (
	"encoding/json"
	"time"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
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
