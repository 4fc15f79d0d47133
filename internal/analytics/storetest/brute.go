package storetest

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// Brute answers q from the events in Go, by the definitions in the
// analytics package doc: clicks summed; visitors the distinct (UTC day, visitor) pairs of a
// group, 0 not counted; a time series has every bucket of [start, end).
func Brute(events []analytics.Event, q analytics.Query, start, end time.Time, loc *time.Location) []analytics.Row {
	links := map[string]bool{}
	for _, u := range q.Links {
		links[u] = true
	}
	type vk struct {
		g   string
		day int64
		v   uint64
	}
	clicks := map[string]int64{}
	seen := map[vk]bool{}
	visitors := map[string]int64{}
	refs := map[string]analytics.LinkRef{}
	wall := func(t time.Time) string {
		switch q.Granularity {
		case analytics.Hour:
			return t.Format("2006-01-02T15")
		case analytics.Day:
			return t.Format(time.DateOnly)
		}
		return t.Format("2006-01")
	}
	lo, hi := start.Unix()/60, (end.Unix()+59)/60
	dim, _ := q.GroupBy.Dimension()
	for i := range events {
		e := &events[i]
		m := e.Minute()
		if e.Link.Namespace != q.Namespace || (q.Links != nil && !links[e.Link.UID]) || m < lo || m >= hi {
			continue
		}
		if q.ExcludeBots && e.Device == analytics.DeviceBot {
			continue
		}
		ok := true
		for d, vals := range q.Filters {
			if !slices.Contains(vals, e.Value(d)) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		var g string
		switch q.GroupBy {
		case analytics.GroupByTimeseries:
			g = wall(e.Time.In(loc))
		case analytics.GroupByLink:
			g = e.Link.UID
			refs[g] = e.Link
		default:
			g = e.Value(dim)
		}
		clicks[g] += e.Clicks
		if e.Visitor != 0 && !seen[vk{g, m / 1440, e.Visitor}] {
			seen[vk{g, m / 1440, e.Visitor}] = true
			visitors[g]++
		}
	}
	var out []analytics.Row
	if q.GroupBy == analytics.GroupByTimeseries {
		done := map[string]bool{}
		for t := q.Granularity.Truncate(start.In(loc)); t.Before(end); t = q.Granularity.Next(t) {
			w := wall(t)
			if done[w] {
				continue
			}
			done[w] = true
			out = append(out, analytics.Row{Key: t.Format(time.RFC3339), Time: t, Clicks: clicks[w], Visitors: visitors[w]})
		}
		return out
	}
	for g, n := range clicks {
		r := analytics.Row{Key: g, Clicks: n, Visitors: visitors[g]}
		if q.GroupBy == analytics.GroupByLink {
			ref := refs[g]
			r.Link = &ref
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(x, y analytics.Row) int {
		if c := cmp.Compare(y.Clicks, x.Clicks); c != 0 {
			return c
		}
		return strings.Compare(x.Key, y.Key)
	})
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out
}
