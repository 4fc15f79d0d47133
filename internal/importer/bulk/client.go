package bulk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/importer"
)

// bulkPath is the bulk create endpoint, under the API's base URL.
const bulkPath = "/api/v1/links/bulk"

// msgKeyTaken is the API's answer for a key already used on the domain in
// the workspace: what "already present" means.
const msgKeyTaken = "The key has already been taken."

// maxAnswer bounds the body read of one answer (100 full links are well
// under it).
const maxAnswer = 16 << 20

// client speaks the bulk contract.
type client struct {
	url   string
	token string
	http  *http.Client
}

func newClient(o Options, token string) *client {
	base := strings.TrimSuffix(strings.TrimRight(o.API, "/"), "/api/v1")
	return &client{url: base + bulkPath, token: token, http: &http.Client{Timeout: o.RequestTimeout}}
}

// item is one link of a bulk body: the API's field names, unset fields
// left out.
type item struct {
	Domain             string   `json:"domain"`
	Key                string   `json:"key"`
	URL                string   `json:"url"`
	IOS                string   `json:"ios,omitempty"`
	Android            string   `json:"android,omitempty"`
	UTMSource          string   `json:"utm_source,omitempty"`
	UTMMedium          string   `json:"utm_medium,omitempty"`
	UTMCampaign        string   `json:"utm_campaign,omitempty"`
	UTMTerm            string   `json:"utm_term,omitempty"`
	UTMContent         string   `json:"utm_content,omitempty"`
	UTMName            string   `json:"utm_name,omitempty"`
	ExternalID         *int64   `json:"external_id,omitempty"`
	Password           string   `json:"password,omitempty"`
	ExpiresAt          string   `json:"expires_at,omitempty"`
	ExpiredRedirectURL string   `json:"expired_redirect_url,omitempty"`
	Tags               []string `json:"tags,omitempty"`
}

func newItem(l importer.Link) item {
	it := item{
		Domain: l.Domain, Key: l.Key, URL: l.URL, IOS: l.IOS, Android: l.Android,
		UTMSource: l.UTMSource, UTMMedium: l.UTMMedium, UTMCampaign: l.UTMCampaign,
		UTMTerm: l.UTMTerm, UTMContent: l.UTMContent, UTMName: l.UTMName,
		ExternalID: l.ExternalID, Password: l.Password, ExpiredRedirectURL: l.ExpiredRedirectURL, Tags: l.Tags,
	}
	if l.ExpiresAt != nil {
		it.ExpiresAt = l.ExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	return it
}

// itemAnswer is the answer for one item of a bulk create.
type itemAnswer struct {
	Index   int                 `json:"index"`
	Status  int                 `json:"status"`
	Message string              `json:"message"`
	Errors  map[string][]string `json:"errors"`
}

// outcome is what became of one link.
type outcome int

const (
	created outcome = iota
	present
	failed
)

// outcome classifies an item's answer. Only a key taken, and nothing else
// wrong, is "already present": a link on a domain outside the workspace is
// a failure even if its key is taken too.
func (a itemAnswer) outcome() outcome {
	switch {
	case a.Status == http.StatusCreated || a.Status == http.StatusOK:
		return created
	case a.Status == http.StatusUnprocessableEntity && len(a.Errors) == 1 && slices.Contains(a.Errors["key"], msgKeyTaken):
		return present
	}
	return failed
}

// reason is a failed item's answer in one line: the message, then every
// field's errors.
func (a itemAnswer) reason() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", a.Status)
	if a.Message != "" {
		b.WriteString(" " + a.Message)
	}
	fields := make([]string, 0, len(a.Errors))
	for f := range a.Errors {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		fmt.Fprintf(&b, " [%s: %s]", f, strings.Join(a.Errors[f], " "))
	}
	return b.String()
}

// reply is a whole answer: its status, headers and body.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// message is the "message" of an error answer, or a short excerpt.
func (r reply) message() string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(r.body, &e) == nil && e.Message != "" {
		return e.Message
	}
	s := strings.TrimSpace(string(r.body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// items reads a 200 answer: one item per input, in input order.
func (r reply) items(n int) ([]itemAnswer, error) {
	var a struct {
		Data []itemAnswer `json:"data"`
	}
	if err := json.Unmarshal(r.body, &a); err != nil {
		return nil, fmt.Errorf("read the bulk answer: %w", err)
	}
	if len(a.Data) != n {
		return nil, fmt.Errorf("the bulk answer has %d items for %d links", len(a.Data), n)
	}
	for i, it := range a.Data {
		if it.Index != i {
			return nil, fmt.Errorf("the bulk answer's item %d has index %d", i, it.Index)
		}
	}
	return a.Data, nil
}

// post sends one batch.
func (c *client) post(ctx context.Context, items []item) (reply, error) {
	body, err := json.Marshal(items)
	if err != nil {
		return reply{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return reply{}, fmt.Errorf("read the answer: %w", err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}, nil
}
