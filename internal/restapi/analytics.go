package restapi

import (
	"encoding/csv"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/linkquery"
	"github.com/kurz-dev/kurz/internal/validation"
)

// analyticsResponse is an analytics answer: the rows, the range counted
// ([start, end) in the answer's zone), the granularity and zone of a time
// series, and whether raw events or rollups answered.
type analyticsResponse struct {
	Data        []analyticsRow `json:"data"`
	GroupBy     string         `json:"group_by"`
	Start       *string        `json:"start"`
	End         string         `json:"end"`
	Granularity string         `json:"granularity"`
	Timezone    string         `json:"timezone"`
	Source      string         `json:"source"`
}

// analyticsRow is one row: a bucket's start, a link's id, or a dimension's
// value ("" unknown, or direct for referrer); visitors is the sum of daily
// distinct visitors.
type analyticsRow struct {
	Key      string            `json:"key"`
	Clicks   int64             `json:"clicks"`
	Visitors int64             `json:"visitors"`
	Link     *analyticsLinkRef `json:"link,omitempty"`
}

type analyticsLinkRef struct {
	Domain string `json:"domain"`
	Key    string `json:"key"`
}

// errNoAnalytics is the answer without a store: analytics off, or only
// exported over OTLP.
var errNoAnalytics = newError(http.StatusServiceUnavailable, "No analytics store is configured on this server: analytics are off, or only exported (--analytics-otlp-endpoint); start it with --analytics-store to query them.")

// linkFilterParams resolve to links; the rest go to analytics.ParseParams.
var linkFilterParams = []string{"domain", "key", "tag"}

// GET /api/v1/links/{id}/analytics
func (s *server) linkAnalytics(w http.ResponseWriter, r *http.Request, c *caller) error {
	l, err := s.links.find(r.Context(), s, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	if s.opts.Analytics == nil {
		return errNoAnalytics
	}
	v := r.URL.Query()
	for _, p := range linkFilterParams {
		if v.Has(p) {
			return paramError(p, "The "+p+" filter applies to /api/v1/analytics, not to one link.")
		}
	}
	q, err := analytics.ParseParams(v, s.now())
	if err != nil {
		return queryError(err)
	}
	q.Namespace, q.Links = c.workspace, []string{string(l.UID)}
	return s.answerAnalytics(w, r, q)
}

// GET /api/v1/analytics
func (s *server) workspaceAnalytics(w http.ResponseWriter, r *http.Request, c *caller) error {
	if s.opts.Analytics == nil {
		return errNoAnalytics
	}
	v := r.URL.Query()
	lq, keys, filtered, err := analyticsLinkFilters(v)
	if err != nil {
		return err
	}
	q, err := analytics.ParseParams(v, s.now())
	if err != nil {
		return queryError(err)
	}
	q.Namespace = c.workspace
	if filtered {
		// The filters resolved to the workspace's links through the
		// list's index, as GET /api/v1/links filters them.
		links, _ := s.linkQuery.Query(c.workspace, lq, 0, math.MaxInt32)
		q.Links = make([]string, 0, len(links))
		for _, l := range links {
			if len(keys) == 0 || keys[l.Spec.Key] {
				q.Links = append(q.Links, string(l.UID))
			}
		}
		if len(q.Links) == 0 { // no link matches: nothing to count
			return s.writeAnalytics(w, r, q, analytics.Result{Start: q.Start, End: q.End, Granularity: q.Granularity, Location: q.Location, Source: analytics.SourceEvents})
		}
	}
	return s.answerAnalytics(w, r, q)
}

// analyticsLinkFilters reads domain, key and tag (each repeatable or
// comma-separated; any value matches, the three ANDed).
func analyticsLinkFilters(v url.Values) (lq linkquery.Query, keys map[string]bool, filtered bool, err error) {
	split := func(name string) []string {
		var out []string
		for _, s := range v[name] {
			for p := range strings.SplitSeq(s, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
		}
		return out
	}
	var errs fieldErrors
	for _, d := range split("domain") {
		d = validation.NormalizeHostname(d)
		if msg := validation.Hostname(d); msg != "" {
			errs.add("domain", msg)
			break
		}
		lq.Domains = append(lq.Domains, d)
	}
	lq.Tags = split("tag")
	for _, t := range lq.Tags {
		if msg := validation.Tag(t); msg != "" {
			errs.add("tag", msg)
			break
		}
	}
	for _, k := range split("key") {
		if keys == nil {
			keys = map[string]bool{}
		}
		keys[k] = true
	}
	for _, p := range linkFilterParams {
		if v.Has(p) && len(split(p)) == 0 {
			errs.add(p, "The "+p+" filter must not be empty.")
		}
	}
	return lq, keys, v.Has("domain") || v.Has("key") || v.Has("tag"), errs.err()
}

func (s *server) answerAnalytics(w http.ResponseWriter, r *http.Request, q analytics.Query) error {
	res, err := s.opts.Analytics.Query(r.Context(), q)
	if err != nil {
		if _, ok := analytics.AsQueryError(err); ok {
			return queryError(err)
		}
		return err
	}
	return s.writeAnalytics(w, r, q, res)
}

func (s *server) writeAnalytics(w http.ResponseWriter, r *http.Request, q analytics.Query, res analytics.Result) error {
	loc := res.Location
	if loc == nil {
		loc = q.Location
	}
	if loc == nil {
		loc = time.UTC
	}
	out := analyticsResponse{
		Data: make([]analyticsRow, len(res.Rows)), GroupBy: string(q.GroupBy),
		End: res.End.In(loc).Format(time.RFC3339), Granularity: string(res.Granularity),
		Timezone: loc.String(), Source: string(res.Source),
	}
	if !res.Start.IsZero() {
		st := res.Start.In(loc).Format(time.RFC3339)
		out.Start = &st
	}
	for i, row := range res.Rows {
		out.Data[i] = analyticsRow{Key: row.Key, Clicks: row.Clicks, Visitors: row.Visitors}
		if row.Link != nil {
			out.Data[i].Link = &analyticsLinkRef{Domain: row.Link.Domain, Key: row.Link.Key}
		}
	}
	if wantsCSV(r) {
		return writeAnalyticsCSV(w, out)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// wantsCSV reports whether the client asked for text/csv.
func wantsCSV(r *http.Request) bool {
	for _, a := range r.Header.Values("Accept") {
		for p := range strings.SplitSeq(a, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(p), ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/csv") {
				return true
			}
		}
	}
	return false
}

func writeAnalyticsCSV(w http.ResponseWriter, out analyticsResponse) error {
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w)
	header := []string{"key", "clicks", "visitors"}
	if out.GroupBy == string(analytics.GroupByLink) {
		header = append(header, "domain", "link_key")
	}
	_ = cw.Write(header)
	for _, row := range out.Data {
		rec := []string{csvSafe(row.Key), strconv.FormatInt(row.Clicks, 10), strconv.FormatInt(row.Visitors, 10)}
		if row.Link != nil {
			rec = append(rec, csvSafe(row.Link.Domain), csvSafe(row.Link.Key))
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	return nil
}

// csvSafe keeps a spreadsheet from reading a value (a referrer, a UTM value
// anyone can send) as a formula.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// paramError is a 422 naming one query parameter.
func paramError(param, msg string) error {
	var f fieldErrors
	f.add(param, msg)
	return f.err()
}

// queryError turns an analytics.QueryError into the contract's 422.
func queryError(err error) error {
	if qe, ok := analytics.AsQueryError(err); ok {
		msg := "The " + qe.Param + " parameter is invalid: " + qe.Reason + "."
		return paramError(qe.Param, msg)
	}
	return errors.Join(err)
}
