package analytics

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Writer takes batches of events. One writer goroutine per replica calls
// Write (never the redirect goroutine); a retried batch (same ID) is stored
// once. Part two's PostgreSQL store and OTLP exporter implement it too.
type Writer interface {
	// Write stores b in one transaction, or nothing of it. It honours ctx:
	// a store that is locked or slow returns ctx's error rather than block.
	Write(ctx context.Context, b Batch) error
	Close() error
}

// Reader answers queries.
type Reader interface {
	Query(ctx context.Context, q Query) (Result, error)
}

// Store is a Writer and Reader that also keeps itself: rollups, retention
// and forgetting deleted links.
type Store interface {
	Writer
	Reader
	// Forget marks the links with these uids deleted at; Maintain removes
	// their analytics once the deletion grace has passed. A link that is
	// not stored is ignored.
	Forget(ctx context.Context, at time.Time, uids ...string) error
	// Maintain computes rollups of closed days not rolled up yet, applies
	// retention and removes the analytics of links deleted longer than the
	// grace ago, as of now. It is idempotent and works in small
	// transactions; run it periodically (for example hourly) from one
	// process.
	Maintain(ctx context.Context, now time.Time) error
}

// Dimension is one of the event's dimensions that queries filter and group on.
type Dimension uint8

const (
	DimDevice Dimension = iota + 1
	DimOS
	DimBrowser
	DimCountry
	DimReferrer
	DimUTMSource
	DimUTMMedium
	DimUTMCampaign
	// DimCity is numbered last because stores keep the numbers; it is a
	// client's dimension like country (Event.City).
	DimCity
)

var dimNames = [...]string{"", "device", "os", "browser", "country", "referrer", "utm_source", "utm_medium", "utm_campaign", "city"}

// Dimensions are every dimension, in order.
var Dimensions = []Dimension{DimDevice, DimOS, DimBrowser, DimCountry, DimCity, DimReferrer, DimUTMSource, DimUTMMedium, DimUTMCampaign}

// ClientDim reports whether d is a dimension of who clicked (device, OS,
// browser, country, city) rather than of where from (referrer, UTM).
func (d Dimension) ClientDim() bool {
	return (d >= DimDevice && d <= DimCountry) || d == DimCity
}

// String is the dimension's name as the API spells it.
func (d Dimension) String() string {
	if int(d) < len(dimNames) && d > 0 {
		return dimNames[d]
	}
	return fmt.Sprintf("Dimension(%d)", uint8(d))
}

// ParseDimension is the dimension named s.
func ParseDimension(s string) (Dimension, bool) {
	for i, n := range dimNames {
		if i > 0 && n == s {
			return Dimension(i), true
		}
	}
	return 0, false
}

// Value is e's value of d (device by name).
func (e *Event) Value(d Dimension) string {
	switch d {
	case DimDevice:
		return e.Device.String()
	case DimOS:
		return e.OS
	case DimBrowser:
		return e.Browser
	case DimCountry:
		return e.Country
	case DimCity:
		return e.City
	case DimReferrer:
		return e.Referrer
	case DimUTMSource:
		return e.UTMSource
	case DimUTMMedium:
		return e.UTMMedium
	case DimUTMCampaign:
		return e.UTMCampaign
	}
	return ""
}

// GroupBy is what a query's rows are: time buckets, links, or the values
// of one dimension.
type GroupBy string

const (
	GroupByTimeseries  GroupBy = "timeseries"
	GroupByLink        GroupBy = "link"
	GroupByDevice      GroupBy = "device"
	GroupByOS          GroupBy = "os"
	GroupByBrowser     GroupBy = "browser"
	GroupByCountry     GroupBy = "country"
	GroupByCity        GroupBy = "city"
	GroupByReferrer    GroupBy = "referrer"
	GroupByUTMSource   GroupBy = "utm_source"
	GroupByUTMMedium   GroupBy = "utm_medium"
	GroupByUTMCampaign GroupBy = "utm_campaign"
)

// GroupBys are every group_by value, timeseries first.
var GroupBys = []GroupBy{GroupByTimeseries, GroupByDevice, GroupByOS, GroupByBrowser, GroupByReferrer, GroupByCountry, GroupByCity, GroupByUTMSource, GroupByUTMMedium, GroupByUTMCampaign, GroupByLink}

// Dimension is the dimension g groups by, or false for timeseries and link.
func (g GroupBy) Dimension() (Dimension, bool) { return ParseDimension(string(g)) }

// Valid reports whether g is one of GroupBys.
func (g GroupBy) Valid() bool {
	for _, v := range GroupBys {
		if v == g {
			return true
		}
	}
	return false
}

// Granularity is the size of a time series' buckets.
type Granularity string

const (
	Hour  Granularity = "hour"
	Day   Granularity = "day"
	Month Granularity = "month"
)

// Valid reports whether g is hour, day or month.
func (g Granularity) Valid() bool { return g == Hour || g == Day || g == Month }

// Truncate is the start of t's bucket in t's location.
func (g Granularity) Truncate(t time.Time) time.Time {
	y, m, d := t.Date()
	switch g {
	case Month:
		return time.Date(y, m, 1, 0, 0, 0, 0, t.Location())
	case Day:
		return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
	}
	return time.Date(y, m, d, t.Hour(), 0, 0, 0, t.Location())
}

// Next is the start of the bucket after the one starting at t.
func (g Granularity) Next(t time.Time) time.Time {
	y, m, d := t.Date()
	switch g {
	case Month:
		return time.Date(y, m+1, 1, 0, 0, 0, 0, t.Location())
	case Day:
		return time.Date(y, m, d+1, 0, 0, 0, 0, t.Location())
	}
	// An hour later in absolute time: time.Date would fold a repeated
	// hour (DST end) into one bucket and skip none.
	return t.Add(time.Hour)
}

// Source is where an answer came from.
type Source string

const (
	// SourceAuto (in a Query) lets the store choose.
	SourceAuto Source = ""
	// SourceEvents is the raw events: exact, any granularity and timezone,
	// within the raw retention.
	SourceEvents Source = "events"
	// SourceRollups is the daily rollups of closed UTC days (with the raw
	// events of the days not rolled up yet).
	SourceRollups Source = "rollups"
)

// Query asks for clicks and visitors of one namespace's links.
type Query struct {
	// Namespace is required: the workspace.
	Namespace string
	// Links are the uids to count; nil is every link of the namespace. The
	// API resolves domain, key and tag filters to uids.
	Links []string
	// Filters keep events whose value of each dimension is one of the
	// listed values (device by name; "" is unknown, or direct for
	// referrer). Dimensions are ANDed.
	Filters map[Dimension][]string
	// Start and End are the range, [Start, End). A zero Start is the oldest
	// data kept.
	Start, End time.Time
	// Granularity is the time series' bucket size (required for
	// timeseries).
	Granularity Granularity
	// Location is the time zone buckets are in; nil is UTC.
	Location *time.Location
	GroupBy  GroupBy
	// ExcludeBots leaves out Device == DeviceBot.
	ExcludeBots bool
	// Limit caps the rows of a grouping other than timeseries (0: no cap).
	Limit int
	// Source forces where the answer comes from (tests, diagnostics);
	// SourceAuto lets the store choose.
	Source Source
}

// Row is one row of an answer.
type Row struct {
	// Key is the bucket's start (RFC 3339 in the query's zone), the link's
	// uid, or the dimension's value ("" unknown or direct).
	Key string
	// Time is the bucket's start (timeseries).
	Time time.Time
	// Link names the link (group by link).
	Link *LinkRef
	// Clicks counts clicks; Visitors is the sum of daily distinct visitors
	// (see the package doc).
	Clicks, Visitors int64
}

// Result is a query's answer.
type Result struct {
	Rows []Row
	// Start and End are the range counted, [Start, End).
	Start, End  time.Time
	Granularity Granularity
	// Location is the zone the buckets are in.
	Location *time.Location
	Source   Source
}

// QueryError is a query the store cannot answer because of one parameter;
// the API answers it as 422 naming Param.
type QueryError struct {
	Param  string // the API's parameter name: "timezone", "granularity", ...
	Reason string
}

func (e *QueryError) Error() string { return e.Param + ": " + e.Reason }

// ParamError returns a *QueryError.
func ParamError(param, format string, args ...any) error {
	return &QueryError{Param: param, Reason: fmt.Sprintf(format, args...)}
}

// AsQueryError is err's *QueryError, if it has one.
func AsQueryError(err error) (*QueryError, bool) {
	var qe *QueryError
	ok := errors.As(err, &qe)
	return qe, ok
}
