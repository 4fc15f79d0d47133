package sqlplan

import (
	"fmt"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// BotDevice is analytics.DeviceBot as the stores keep it.
const BotDevice = int(analytics.DeviceBot)

// AbsMinute is an event's time in unix minutes, over events e.
const AbsMinute = "(e.day * 1440 + e.minute)"

// ValueExpr is the SQL of a dimension's value over events e joined with
// clients c and sources s (or a rollup's rows joined with them).
var ValueExpr = map[analytics.Dimension]string{
	analytics.DimDevice:      "c.device",
	analytics.DimOS:          "c.os",
	analytics.DimBrowser:     "c.browser",
	analytics.DimCountry:     "c.country",
	analytics.DimCity:        "c.city",
	analytics.DimReferrer:    "s.referrer",
	analytics.DimUTMSource:   "s.utm_source",
	analytics.DimUTMMedium:   "s.utm_medium",
	analytics.DimUTMCampaign: "s.utm_campaign",
}

// IDList is ids as SQL: "1,2,3".
func IDList(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, id)
	}
	return b.String()
}

// DimFilterSQL is the conditions on clients c and sources s for the
// filters and exclude_bots (ids are the store's own integers, written
// inline).
func (p *Plan) DimFilterSQL() []string {
	var out []string
	for _, f := range p.Filters {
		out = append(out, fmt.Sprintf("%s IN (%s)", ValueExpr[f.Dim], IDList(f.IDs)))
	}
	if p.Q.ExcludeBots {
		out = append(out, fmt.Sprintf("c.device <> %d", BotDevice))
	}
	return out
}

// FilterCond is DimFilterSQL as " AND ..." ("" without conditions).
func (p *Plan) FilterCond() string {
	if w := p.DimFilterSQL(); len(w) > 0 {
		return " AND " + strings.Join(w, " AND ")
	}
	return ""
}

// GroupSQL is the SQL of the group key over events e or a rollup's
// columns: a wall-clock hour or day number for a time series (mapped to
// buckets by Series), the link, or the dimension's value.
func (p *Plan) GroupSQL(minuteCol, linkCol string) string {
	switch p.Q.GroupBy {
	case analytics.GroupByTimeseries:
		switch p.Q.Granularity {
		case analytics.Hour:
			return LocalMinuteSQL(minuteCol, p.Pieces) + " / 60"
		case analytics.Month:
			return p.MonthSQL(LocalMinuteSQL(minuteCol, p.Pieces))
		}
		return LocalMinuteSQL(minuteCol, p.Pieces) + " / 1440"
	case analytics.GroupByLink:
		return linkCol
	}
	return ValueExpr[p.Dim]
}

// LocalDaySQL is the wall-clock day number of the unix day dayCol (a
// rollup's day) for a time series over rollups.
func (p *Plan) LocalDaySQL(dayCol string) string {
	return LocalMinuteSQL(dayCol+" * 1440", p.Pieces) + " / 1440"
}

// MonthSQL is the wall-clock day number of the first day of the month
// that holds the wall-clock minute local: a month's visitors are counted
// per UTC day in the month, not per local day (a UTC day can touch two).
func (p *Plan) MonthSQL(local string) string {
	first := time.Unix(p.Lo*60, 0).In(p.Loc)
	m := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC)
	last := time.Unix(p.Hi*60, 0).In(p.Loc)
	var b strings.Builder
	b.WriteString("(CASE")
	whens := 0
	for {
		next := m.AddDate(0, 1, 0)
		if !next.Before(time.Date(last.Year(), last.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 1, 0)) {
			break
		}
		fmt.Fprintf(&b, " WHEN %s < %d THEN %d", local, next.Unix()/60, m.Unix()/86400)
		whens++
		m = next
	}
	if whens == 0 {
		return fmt.Sprint(m.Unix() / 86400)
	}
	fmt.Fprintf(&b, " ELSE %d END)", m.Unix()/86400)
	return b.String()
}

// NeedsClients reports whether the query's SQL reads clients c.
func (p *Plan) NeedsClients() bool {
	if p.Dim.ClientDim() {
		return true
	}
	for _, f := range p.Filters {
		if f.Dim.ClientDim() {
			return true
		}
	}
	return p.Q.ExcludeBots
}

// NeedsSources reports whether the query's SQL reads sources s.
func (p *Plan) NeedsSources() bool {
	if p.Dim != 0 && !p.Dim.ClientDim() {
		return true
	}
	for _, f := range p.Filters {
		if !f.Dim.ClientDim() {
			return true
		}
	}
	return false
}

// Joins are the joins of events e (or a rollup aliased e) with clients c
// and sources s that the query needs.
func (p *Plan) Joins(clientCol, sourceCol string) string {
	j := ""
	if p.NeedsClients() {
		j += " JOIN clients c ON c.id = " + clientCol
	}
	if p.NeedsSources() {
		j += " JOIN sources s ON s.id = " + sourceCol
	}
	return j
}
