package sqlplan

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// Counts are a group's clicks and visitors.
type Counts struct{ Clicks, Visitors int64 }

// Acc sums the parts of an answer by group key: a bucket's wall-clock
// number, a link id, or a dimension's value id.
type Acc map[int64]*Counts

// Add adds a part's row to group k.
func (a Acc) Add(k, clicks, visitors int64) {
	c := a[k]
	if c == nil {
		c = &Counts{}
		a[k] = c
	}
	c.Clicks += clicks
	c.Visitors += visitors
}

// Series is every bucket of the range with its sums. The group keys are
// wall-clock hour or day numbers in the query's zone.
func (p *Plan) Series(a Acc) []analytics.Row {
	g := p.Q.Granularity
	wall := func(t time.Time) string { // a bucket's wall-clock name
		switch g {
		case analytics.Hour:
			return t.Format("2006-01-02T15")
		case analytics.Day:
			return t.Format(time.DateOnly)
		}
		return t.Format("2006-01")
	}
	sums := map[string]*Counts{}
	for k, c := range a {
		var t time.Time
		if g == analytics.Hour {
			t = time.Unix(k*3600, 0).UTC()
		} else {
			t = time.Unix(k*86400, 0).UTC()
		}
		w := wall(t)
		if sums[w] == nil {
			sums[w] = &Counts{}
		}
		sums[w].Clicks += c.Clicks
		sums[w].Visitors += c.Visitors
	}
	var out []analytics.Row
	seen := map[string]bool{}
	end := time.Unix(p.Hi*60, 0)
	for t := g.Truncate(time.Unix(p.Lo*60, 0).In(p.Loc)); t.Before(end); t = g.Next(t) {
		w := wall(t)
		if seen[w] { // the repeated hour when clocks go back
			continue
		}
		seen[w] = true
		r := analytics.Row{Key: t.Format(time.RFC3339), Time: t}
		if c := sums[w]; c != nil {
			r.Clicks, r.Visitors = c.Clicks, c.Visitors
		}
		out = append(out, r)
	}
	return out
}

// Groups are a's groups as rows without keys, and their group keys in the
// same order, for the store to name.
func Groups(a Acc) ([]analytics.Row, []int64) {
	out := make([]analytics.Row, 0, len(a))
	ids := make([]int64, 0, len(a))
	for k, c := range a {
		out = append(out, analytics.Row{Clicks: c.Clicks, Visitors: c.Visitors})
		ids = append(ids, k)
	}
	return out, ids
}

// Rank orders named groups by clicks (then key) and applies the limit.
func (p *Plan) Rank(out []analytics.Row) []analytics.Row {
	slices.SortFunc(out, func(x, y analytics.Row) int {
		if c := cmp.Compare(y.Clicks, x.Clicks); c != 0 {
			return c
		}
		return strings.Compare(x.Key, y.Key)
	})
	if p.Q.Limit > 0 && len(out) > p.Q.Limit {
		out = out[:p.Q.Limit]
	}
	return out
}

// AppendRange appends [lo, hi) to rs, merging it with the last range when
// they touch.
func AppendRange(rs [][2]int64, lo, hi int64) [][2]int64 {
	if n := len(rs); n > 0 && rs[n-1][1] == lo {
		rs[n-1][1] = hi
		return rs
	}
	return append(rs, [2]int64{lo, hi})
}

// WholeDays are the unix days [d0, d1) wholly inside the range.
func (p *Plan) WholeDays() (d0, d1 int64) {
	return (p.Lo + 1439) / 1440, p.Hi / 1440
}

// RolledRuns splits the range into runs of rolled-up whole days ([from,
// to) unix days, read from the rollups) and the minute ranges left to raw
// events, given which whole days are rolled up.
func (p *Plan) RolledRuns(done map[int64]bool) (runs, raw [][2]int64) {
	d0, d1 := p.WholeDays()
	cur := p.Lo
	for d := d0; d < d1; d++ {
		if !done[d] {
			continue
		}
		if cur < d*1440 {
			raw = AppendRange(raw, cur, d*1440)
		}
		if n := len(runs); n > 0 && runs[n-1][1] == d {
			runs[n-1][1] = d + 1
		} else {
			runs = append(runs, [2]int64{d, d + 1})
		}
		cur = (d + 1) * 1440
	}
	if cur < p.Hi {
		raw = AppendRange(raw, cur, p.Hi)
	}
	return runs, raw
}

// MonthRuns splits the range into the rolled-up months it covers whole
// (read from link_months) and the minute ranges left to raw events, given
// the rolled-up months in ascending order. A month the range ends inside
// is left to raw events.
func (p *Plan) MonthRuns(done []int64) (months []int64, raw [][2]int64) {
	cur := p.Lo
	for _, m := range done {
		lo, hi := MonthStartDay(m)*1440, MonthStartDay(m+1)*1440
		if hi > p.Hi || hi <= cur {
			continue // not over in the range, or before it
		}
		if cur < lo {
			raw = AppendRange(raw, cur, lo)
		}
		months = append(months, m)
		cur = hi
	}
	if cur < p.Hi {
		raw = AppendRange(raw, cur, p.Hi)
	}
	return months, raw
}

// MonthTotalRuns splits runs of rolled-up days ([from, to) unix days) into
// the months they cover whole whose per-link totals are current (read
// from link_mtotals: one row per link and month) and the day runs left
// (read from link_days). current holds the months with current totals.
// Top links over 90 days read about 2 × links month rows and at most
// about 31 × links day rows instead of 90 × links day rows.
func MonthTotalRuns(runs [][2]int64, current map[int64]bool) (months []int64, days [][2]int64) {
	for _, r := range runs {
		cur := r[0]
		for m := MonthOfDay(r[0]); MonthStartDay(m) < r[1]; m++ {
			lo, hi := MonthStartDay(m), MonthStartDay(m+1)
			if lo < r[0] || hi > r[1] || !current[m] {
				continue
			}
			if cur < lo {
				days = AppendRange(days, cur, lo)
			}
			months = append(months, m)
			cur = hi
		}
		if cur < r[1] {
			days = AppendRange(days, cur, r[1])
		}
	}
	return months, days
}
