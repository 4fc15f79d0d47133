package sqlplan

import (
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// Retention is how long a store keeps raw events and rollups.
type Retention struct {
	Raw, Rollup time.Duration
}

// RawFirstDay is the oldest unix day whose raw events are kept as of now.
func (r Retention) RawFirstDay(now time.Time) int64 {
	return analytics.UnixDay(now.Add(-r.Raw)) + 1
}

// RollupFirstDay is the oldest unix day whose rollups are kept as of now.
func (r Retention) RollupFirstDay(now time.Time) int64 {
	return analytics.UnixDay(now.Add(-r.Rollup)) + 1
}

// Plan is a routed query: where its answer comes from, its range and
// zone, and (once the store resolved them) the ids its names have.
type Plan struct {
	Q      analytics.Query
	Loc    *time.Location
	Pieces []Piece
	// Dim is the dimension grouped by, 0 for timeseries and link.
	Dim analytics.Dimension
	// Lo and Hi are the range in unix minutes, [Lo, Hi).
	Lo, Hi int64
	Src    analytics.Source
	// Monthly: answered from link_months (and raw events for the rest).
	Monthly bool

	// Resolved by the store: the namespace's id, the links' ids (nil:
	// every link of the namespace), the filters' ids.
	NS      int64
	Links   []int64
	Filters []Filter
}

// Filter is a dimension filter resolved to ids (device numbers for
// device, dictionary ids otherwise).
type Filter struct {
	Dim analytics.Dimension
	IDs []int64
}

// Route decides where q is answered from, as of now, and the range and
// zone that answer has. See the sqlite package doc for the rules.
func Route(q analytics.Query, now time.Time, ret Retention) (*Plan, error) {
	p := &Plan{Q: q, Loc: q.Location}
	if p.Loc == nil {
		p.Loc = time.UTC
	}
	p.Dim, _ = q.GroupBy.Dimension()
	rawFirst := ret.RawFirstDay(now) * 1440
	start, end := q.Start, q.End
	if start.IsZero() || start.Unix()/60 < ret.RollupFirstDay(now)*1440 {
		start = time.Unix(ret.RollupFirstDay(now)*86400, 0)
	}
	if !start.Before(end) {
		return nil, analytics.ParamError("start", "the range ends before the oldest analytics kept (%s)", start.UTC().Format(time.DateOnly))
	}
	p.Src = q.Source
	aligned := UTCBuckets(q, p.Loc, start, end)
	if p.Src == analytics.SourceEvents && start.Unix()/60 < rawFirst {
		start = time.Unix(rawFirst*60, 0)
	}
	withinRaw := start.Unix()/60 >= rawFirst
	if p.Src == analytics.SourceAuto {
		p.Src = analytics.SourceEvents
		if ExactFromRollups(q, aligned) || !withinRaw {
			p.Src = analytics.SourceRollups
		}
	}
	if p.Src == analytics.SourceRollups {
		var err error
		if start, err = p.routeRollups(ret, start, end, aligned, withinRaw); err != nil {
			return nil, err
		}
	}
	p.Pieces = ZonePieces(p.Loc, start, end)
	p.Lo, p.Hi = start.Unix()/60, (end.Unix()+59)/60
	return p, nil
}

// UTCBuckets reports whether q's answer over [start, end) in loc is its
// answer in UTC. Only a time series' buckets are local days. A breakdown
// (by a dimension or by link) sums its range whatever the zone, so the
// rollups answer it in any zone: the partial UTC days at the range's edges
// come from raw events, as they do for any range.
func UTCBuckets(q analytics.Query, loc *time.Location, start, end time.Time) bool {
	return q.GroupBy != analytics.GroupByTimeseries || UTCAligned(ZonePieces(loc, start, end))
}

// ExactFromRollups reports whether the daily rollups (with raw events for
// the days not rolled up) answer q exactly: a breakdown or a time series
// by UTC days or months, no dimension filter, the workspace, one link or
// grouped by link. aligned is whether q is a breakdown or its zone is UTC
// over its range.
func ExactFromRollups(q analytics.Query, aligned bool) bool {
	return q.Granularity != analytics.Hour && aligned && len(q.Filters) == 0 &&
		(q.Links == nil || len(q.Links) == 1 || q.GroupBy == analytics.GroupByLink)
}

// routeRollups checks what the rollups can answer, moves the zone to UTC
// or the start to a month's where they answer so, and returns the start.
func (p *Plan) routeRollups(ret Retention, start, end time.Time, aligned, withinRaw bool) (time.Time, error) {
	q := p.Q
	if q.Granularity == analytics.Hour && q.GroupBy == analytics.GroupByTimeseries {
		return start, analytics.ParamError("granularity", "hour needs raw events, kept for %s: use day or month, or a range within the raw retention", ret.Raw)
	}
	if !aligned {
		if !WholeHours(ZonePieces(p.Loc, start, end)) {
			return start, analytics.ParamError("timezone", "%s is not a whole number of hours from UTC: its buckets need raw events, kept for %s", p.Loc, ret.Raw)
		}
		// Rollups are UTC days: beyond the raw retention a zone a whole
		// number of hours off is answered in UTC (Result.Location says so).
		p.Loc = time.UTC
	}
	if len(q.Filters) > 0 || (len(q.Links) > 1 && q.GroupBy != analytics.GroupByLink) || (q.Links != nil && p.Dim != 0 && !withinRaw) {
		// link_months: any filter and grouping, by whole UTC months.
		if q.GroupBy == analytics.GroupByTimeseries && q.Granularity != analytics.Month {
			return start, analytics.ParamError("granularity", "filters and link sets beyond the raw retention (%s) are answered by month", ret.Raw)
		}
		p.Monthly = true
		start = time.Unix(MonthStartDay(MonthOfDay(start.Unix()/86400))*86400, 0)
	}
	return start, nil
}

// Result is the answer's frame (rows are added by the store).
func (p *Plan) Result() analytics.Result {
	return analytics.Result{
		Start: time.Unix(p.Lo*60, 0).In(p.Loc), End: p.Q.End.In(p.Loc),
		Granularity: p.Q.Granularity, Location: p.Loc, Source: p.Src,
	}
}

// MonthOfDay is the month (months since 1970-01) of a unix day.
func MonthOfDay(d int64) int64 {
	t := time.Unix(d*86400, 0).UTC()
	return int64(t.Year()-1970)*12 + int64(t.Month()) - 1
}

// MonthStartDay is the unix day a month starts on.
func MonthStartDay(m int64) int64 {
	return time.Date(1970+int(m/12), time.Month(m%12+1), 1, 0, 0, 0, 0, time.UTC).Unix() / 86400
}
