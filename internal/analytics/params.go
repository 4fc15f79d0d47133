package analytics

import (
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Query parameter limits.
const (
	DefaultLimit = 10
	MaxLimit     = 1000
	// MaxBuckets bounds a time series (hourly over a year is 8 760).
	MaxBuckets = 10000
	// MaxFilterValues bounds the values of one filter.
	MaxFilterValues = 100
)

// Intervals are the named intervals, shortest first.
var Intervals = []string{"24h", "7d", "30d", "90d", "1y", "all"}

var intervalSpan = map[string]time.Duration{
	"24h": 24 * time.Hour,
	"7d":  7 * 24 * time.Hour,
	"30d": 30 * 24 * time.Hour,
	"90d": 90 * 24 * time.Hour,
	"1y":  365 * 24 * time.Hour,
}

// DefaultInterval is the interval when neither interval nor start is given.
const DefaultInterval = "30d"

// ParseParams reads the API's query parameters into a Query: interval
// (24h, 7d, 30d, 90d, 1y, all) or start and end (RFC 3339), granularity
// (derived from the span unless given), timezone (an IANA name; UTC by
// default), group_by, exclude_bots (true by default), limit and the
// dimension filters (device, os, browser, referrer, country, city, utm_*; a
// comma-separated list is any of the values). Namespace and Links are the
// caller's. Every error is a *QueryError naming the parameter.
//
// A named interval ends at now and starts that long before, moved back to
// its bucket's start in the zone, so that every bucket is whole but the
// last; "all" starts at the oldest data kept (a zero Start).
func ParseParams(v url.Values, now time.Time) (Query, error) {
	q := Query{Location: time.UTC, ExcludeBots: true}
	for name := range v {
		if !knownParam(name) {
			return Query{}, ParamError(name, "unknown parameter")
		}
	}
	if tz := v.Get("timezone"); tz != "" {
		loc, err := ParseTimezone(tz)
		if err != nil {
			return Query{}, err
		}
		q.Location = loc
	}
	var err error
	if q.Start, q.End, q.Granularity, err = parseRange(v, now, q.Location); err != nil {
		return Query{}, err
	}
	q.GroupBy = GroupByTimeseries
	if g := v.Get("group_by"); g != "" {
		q.GroupBy = GroupBy(g)
		if !q.GroupBy.Valid() {
			return Query{}, ParamError("group_by", "%q is not one of %s", g, joinGroupBys())
		}
	}
	if s := v.Get("exclude_bots"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return Query{}, ParamError("exclude_bots", "%q is not true or false", s)
		}
		q.ExcludeBots = b
	}
	if q.GroupBy != GroupByTimeseries {
		q.Limit = DefaultLimit
		if s := v.Get("limit"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > MaxLimit {
				return Query{}, ParamError("limit", "%q is not a whole number from 1 to %d", s, MaxLimit)
			}
			q.Limit = n
		}
	} else if v.Has("limit") {
		return Query{}, ParamError("limit", "applies to a group_by other than timeseries")
	}
	for _, d := range Dimensions {
		s, ok := v[d.String()]
		if !ok {
			continue
		}
		vals := strings.Split(strings.Join(s, ","), ",")
		if len(vals) > MaxFilterValues {
			return Query{}, ParamError(d.String(), "more than %d values", MaxFilterValues)
		}
		if q.Filters == nil {
			q.Filters = map[Dimension][]string{}
		}
		q.Filters[d] = vals
	}
	if err := q.validateParams(); err != nil {
		return Query{}, err
	}
	return q, nil
}

func knownParam(name string) bool {
	switch name {
	case "interval", "start", "end", "granularity", "timezone", "group_by", "exclude_bots", "limit":
		return true
	case "domain", "key", "tag": // the API's link filters, resolved to uids by the caller
		return true
	}
	_, ok := ParseDimension(name)
	return ok
}

func joinGroupBys() string {
	s := make([]string, len(GroupBys))
	for i, g := range GroupBys {
		s[i] = string(g)
	}
	return strings.Join(s, ", ")
}

// ParseTimezone is the IANA zone named s ("UTC", "Europe/Berlin"). The
// process's "Local" is refused: it would answer differently per machine.
func ParseTimezone(s string) (*time.Location, error) {
	if s == "" || s == "UTC" {
		return time.UTC, nil
	}
	if s == "Local" || strings.HasPrefix(s, "/") || strings.Contains(s, "..") {
		return nil, ParamError("timezone", "%q is not an IANA time zone name", s)
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return nil, ParamError("timezone", "%q is not an IANA time zone name", s)
	}
	return loc, nil
}

func parseRange(v url.Values, now time.Time, loc *time.Location) (start, end time.Time, g Granularity, err error) {
	interval, hasStart, hasEnd := v.Get("interval"), v.Has("start"), v.Has("end")
	if interval != "" && (hasStart || hasEnd) {
		return start, end, "", ParamError("interval", "give interval or start and end, not both")
	}
	if gs := v.Get("granularity"); gs != "" {
		g = Granularity(gs)
		if !g.Valid() {
			return start, end, "", ParamError("granularity", "%q is not hour, day or month", gs)
		}
	}
	now = now.In(loc)
	if hasStart || hasEnd {
		end = now
		if hasEnd {
			if end, err = parseTime(v, "end"); err != nil {
				return start, end, "", err
			}
		}
		if !hasStart {
			return start, end, "", ParamError("start", "is required with end")
		}
		if start, err = parseTime(v, "start"); err != nil {
			return start, end, "", err
		}
		if !start.Before(end) {
			return start, end, "", ParamError("start", "must be before end")
		}
		if g == "" {
			g = DeriveGranularity(end.Sub(start))
		}
		return start.In(loc), end.In(loc), g, nil
	}
	if interval == "" {
		interval = DefaultInterval
	}
	if interval == "all" {
		if g == "" {
			g = Month
		}
		return time.Time{}, now, g, nil
	}
	span, ok := intervalSpan[interval]
	if !ok {
		return start, end, "", ParamError("interval", "%q is not one of %s", interval, strings.Join(Intervals, ", "))
	}
	if g == "" {
		g = DeriveGranularity(span)
	}
	return g.Truncate(now.Add(-span)), now, g, nil
}

func parseTime(v url.Values, name string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v.Get(name))
	if err != nil {
		return t, ParamError(name, "%q is not an RFC 3339 time (2024-05-01T00:00:00Z)", v.Get(name))
	}
	return t, nil
}

// DeriveGranularity is the granularity for a span: hour up to two days, day
// up to 180 days, month beyond.
func DeriveGranularity(span time.Duration) Granularity {
	switch {
	case span <= 48*time.Hour:
		return Hour
	case span <= 180*24*time.Hour:
		return Day
	}
	return Month
}

// Validate checks what every store needs of a query, naming the API's
// parameter in a *QueryError.
func (q *Query) Validate() error {
	if q.Namespace == "" {
		return ParamError("namespace", "is required")
	}
	return q.validateParams()
}

// validateParams is Validate without the caller's part (namespace).
func (q *Query) validateParams() error {
	if !q.GroupBy.Valid() {
		return ParamError("group_by", "%q is not one of %s", q.GroupBy, joinGroupBys())
	}
	if !q.Granularity.Valid() {
		return ParamError("granularity", "%q is not hour, day or month", q.Granularity)
	}
	if q.End.IsZero() || (!q.Start.IsZero() && !q.Start.Before(q.End)) {
		return ParamError("start", "must be before end")
	}
	if q.Limit < 0 || q.Limit > MaxLimit {
		return ParamError("limit", "%d is not from 1 to %d", q.Limit, MaxLimit)
	}
	if q.Source != SourceAuto && q.Source != SourceEvents && q.Source != SourceRollups {
		return ParamError("source", "%q is not events or rollups", q.Source)
	}
	for d, vals := range q.Filters {
		if d < DimDevice || d > DimCity {
			return ParamError("filter", "unknown dimension %d", d)
		}
		if len(vals) == 0 || len(vals) > MaxFilterValues {
			return ParamError(d.String(), "give 1 to %d values", MaxFilterValues)
		}
		for _, s := range vals {
			if d == DimDevice {
				if _, ok := ParseDevice(s); !ok {
					return ParamError("device", "%q is not one of %s", s, strings.Join(deviceNames[:], ", "))
				}
			} else if len(s) > MaxUTMLen {
				return ParamError(d.String(), "a value is longer than %d bytes", MaxUTMLen)
			}
		}
	}
	if q.GroupBy == GroupByTimeseries && !q.Start.IsZero() {
		if n := approxBuckets(q.Granularity, q.End.Sub(q.Start)); n > MaxBuckets {
			return ParamError("granularity", "%s over this range is about %d buckets, more than %d", q.Granularity, n, MaxBuckets)
		}
	}
	return nil
}

func approxBuckets(g Granularity, span time.Duration) int64 {
	switch g {
	case Hour:
		return int64(span/time.Hour) + 1
	case Day:
		return int64(span/(24*time.Hour)) + 1
	}
	return int64(span/(28*24*time.Hour)) + 1
}
