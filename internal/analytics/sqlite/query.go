package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// counts are a group's clicks and visitors.
type counts struct{ clicks, visitors int64 }

// acc sums parts' rows by group key: a bucket's wall-clock number, a link
// id, or a dimension's value id.
type acc map[int64]*counts

func (a acc) add(k, clicks, visitors int64) {
	c := a[k]
	if c == nil {
		c = &counts{}
		a[k] = c
	}
	c.clicks += clicks
	c.visitors += visitors
}

// plan is a resolved query.
type plan struct {
	q       analytics.Query
	loc     *time.Location
	pieces  []piece
	ns      int64
	links   []int64 // nil: every link of ns
	filters []filter
	dim     analytics.Dimension // for a dimension grouping
	// the range in unix minutes, [lo, hi)
	lo, hi int64
	src    analytics.Source
	// monthly: from link_months (and raw events for the rest)
	monthly bool
}

type filter struct {
	dim analytics.Dimension
	ids []int64
}

// Query answers q. See the package doc for where answers come from.
func (s *Store) Query(ctx context.Context, q analytics.Query) (analytics.Result, error) {
	if err := q.Validate(); err != nil {
		return analytics.Result{}, err
	}
	p, err := s.route(q, s.now())
	if err != nil {
		return analytics.Result{}, err
	}
	res := analytics.Result{
		Start: time.Unix(p.lo*60, 0).In(p.loc), End: q.End.In(p.loc),
		Granularity: q.Granularity, Location: p.loc, Source: p.src,
	}
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return analytics.Result{}, fmt.Errorf("analytics query: %w", err)
	}
	defer conn.Close()
	ok, err := s.resolve(ctx, conn, p)
	if err != nil {
		return analytics.Result{}, fmt.Errorf("analytics query: %w", err)
	}
	a := acc{}
	if ok {
		switch {
		case p.src == analytics.SourceEvents:
			err = s.rawPart(ctx, conn, p, [][2]int64{{p.lo, p.hi}}, nil, a)
		case p.monthly:
			err = s.monthsPart(ctx, conn, p, a)
		default:
			err = s.rollupPart(ctx, conn, p, a)
		}
		if err != nil {
			return analytics.Result{}, fmt.Errorf("analytics query: %w", err)
		}
	}
	if res.Rows, err = s.rows(ctx, conn, p, a); err != nil {
		return analytics.Result{}, fmt.Errorf("analytics query: %w", err)
	}
	return res, nil
}

// route decides where q is answered from, as of now, and the range and
// zone that answer has.
func (s *Store) route(q analytics.Query, now time.Time) (*plan, error) {
	p := &plan{q: q, loc: q.Location}
	if p.loc == nil {
		p.loc = time.UTC
	}
	p.dim, _ = q.GroupBy.Dimension()
	rawFirst := s.rawFirstDay(now) * 1440
	start, end := q.Start, q.End
	if start.IsZero() || start.Unix()/60 < s.rollupFirstDay(now)*1440 {
		start = time.Unix(s.rollupFirstDay(now)*86400, 0)
	}
	if !start.Before(end) {
		return nil, analytics.ParamError("start", "the range ends before the oldest analytics kept (%s)", start.UTC().Format(time.DateOnly))
	}
	p.src = q.Source
	aligned := utcAligned(zonePieces(p.loc, start, end))
	if p.src == analytics.SourceEvents && start.Unix()/60 < rawFirst {
		start = time.Unix(rawFirst*60, 0)
	}
	withinRaw := start.Unix()/60 >= rawFirst
	if p.src == analytics.SourceAuto {
		p.src = analytics.SourceEvents
		exact := q.Granularity != analytics.Hour && aligned && len(q.Filters) == 0 &&
			(q.Links == nil || len(q.Links) == 1 || q.GroupBy == analytics.GroupByLink)
		if exact || !withinRaw {
			p.src = analytics.SourceRollups
		}
	}
	if p.src == analytics.SourceRollups {
		var err error
		if start, err = s.routeRollups(p, start, end, aligned, withinRaw); err != nil {
			return nil, err
		}
	}
	p.pieces = zonePieces(p.loc, start, end)
	p.lo, p.hi = start.Unix()/60, (end.Unix()+59)/60
	return p, nil
}

// routeRollups checks what the rollups can answer, moves the zone to UTC
// or the start to a month's where they answer so, and returns the start.
func (s *Store) routeRollups(p *plan, start, end time.Time, aligned, withinRaw bool) (time.Time, error) {
	q := p.q
	if q.Granularity == analytics.Hour && q.GroupBy == analytics.GroupByTimeseries {
		return start, analytics.ParamError("granularity", "hour needs raw events, kept for %s: use day or month, or a range within the raw retention", s.opts.Retention)
	}
	if !aligned {
		if !wholeHours(zonePieces(p.loc, start, end)) {
			return start, analytics.ParamError("timezone", "%s is not a whole number of hours from UTC: its buckets need raw events, kept for %s", p.loc, s.opts.Retention)
		}
		// Rollups are UTC days: beyond the raw retention a zone a whole
		// number of hours off is answered in UTC (Result.Location says so).
		p.loc = time.UTC
	}
	if len(q.Filters) > 0 || (len(q.Links) > 1 && q.GroupBy != analytics.GroupByLink) || (q.Links != nil && p.dim != 0 && !withinRaw) {
		// link_months: any filter and grouping, by whole UTC months.
		if q.GroupBy == analytics.GroupByTimeseries && q.Granularity != analytics.Month {
			return start, analytics.ParamError("granularity", "filters and link sets beyond the raw retention (%s) are answered by month", s.opts.Retention)
		}
		p.monthly = true
		start = time.Unix(monthStartDay(monthOfDay(start.Unix()/86400))*86400, 0)
	}
	return start, nil
}

// resolve turns names into ids; false when nothing can match.
func (s *Store) resolve(ctx context.Context, conn *sql.Conn, p *plan) (bool, error) {
	err := conn.QueryRowContext(ctx, "SELECT id FROM strs WHERE s = ?", p.q.Namespace).Scan(&p.ns)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if p.q.Links != nil {
		uids, _ := json.Marshal(p.q.Links)
		rows, err := conn.QueryContext(ctx, "SELECT id FROM links WHERE namespace = ? AND uid IN (SELECT value FROM json_each(?)) ORDER BY id", p.ns, string(uids))
		if err != nil {
			return false, err
		}
		p.links = []int64{}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return false, err
			}
			p.links = append(p.links, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return false, err
		}
		if len(p.links) == 0 {
			return false, nil
		}
	}
	dims := make([]analytics.Dimension, 0, len(p.q.Filters))
	for d := range p.q.Filters {
		dims = append(dims, d)
	}
	slices.Sort(dims)
	for _, d := range dims {
		f := filter{dim: d}
		for _, v := range p.q.Filters[d] {
			if d == analytics.DimDevice {
				dev, _ := analytics.ParseDevice(v)
				f.ids = append(f.ids, int64(dev))
				continue
			}
			var id int64
			err := conn.QueryRowContext(ctx, "SELECT id FROM strs WHERE s = ?", v).Scan(&id)
			if err == sql.ErrNoRows {
				continue
			}
			if err != nil {
				return false, err
			}
			f.ids = append(f.ids, id)
		}
		if len(f.ids) == 0 {
			return false, nil
		}
		p.filters = append(p.filters, f)
	}
	return true, nil
}

func idList(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, id)
	}
	return b.String()
}

// dimFilterSQL is the conditions on clients c and sources s for the
// filters and exclude_bots (ids are the store's own integers, written
// inline).
func (p *plan) dimFilterSQL() []string {
	var out []string
	for _, f := range p.filters {
		out = append(out, fmt.Sprintf("%s IN (%s)", valueExpr[f.dim], idList(f.ids)))
	}
	if p.q.ExcludeBots {
		out = append(out, fmt.Sprintf("c.device <> %d", botDevice))
	}
	return out
}

// groupSQL is the SQL of the group key over events e or a rollup's
// columns: a wall-clock hour or day number for a time series (mapped to
// buckets in rows), the link, or the dimension's value.
func (p *plan) groupSQL(minuteCol, linkCol string) string {
	switch p.q.GroupBy {
	case analytics.GroupByTimeseries:
		switch p.q.Granularity {
		case analytics.Hour:
			return localMinuteSQL(minuteCol, p.pieces) + " / 60"
		case analytics.Month:
			return p.monthSQL(localMinuteSQL(minuteCol, p.pieces))
		}
		return localMinuteSQL(minuteCol, p.pieces) + " / 1440"
	case analytics.GroupByLink:
		return linkCol
	}
	return valueExpr[p.dim]
}

// monthSQL is the wall-clock day number of the first day of the month
// that holds the wall-clock minute local: a month's visitors are counted
// per UTC day in the month, not per local day (a UTC day can touch two).
func (p *plan) monthSQL(local string) string {
	first := time.Unix(p.lo*60, 0).In(p.loc)
	m := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC)
	last := time.Unix(p.hi*60, 0).In(p.loc)
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

// absMinute is an event's time in unix minutes.
const absMinute = "(e.day * 1440 + e.minute)"

// maxRangeRows bounds the (link, day) pairs a raw query seeks one by one;
// past it the query scans the days' rows and keeps the links' (a link set
// of thousands is most of its namespace anyway).
const maxRangeRows = 20000

// rawPart adds the raw events in the minute ranges segs (or, with
// perLink, each link's own ranges) to a. Visitors are distinct per group
// and UTC day, summed over days.
func (s *Store) rawPart(ctx context.Context, conn *sql.Conn, p *plan, segs [][2]int64, perLink map[int64][][2]int64, a acc) error {
	if perLink == nil && p.links != nil {
		perLink = make(map[int64][][2]int64, len(p.links))
		for _, l := range p.links {
			perLink[l] = segs
		}
	}
	where := p.dimFilterSQL()
	joins := ""
	if p.needsClients() {
		joins += " JOIN clients c ON c.id = e.client"
	}
	if p.needsSources() {
		joins += " JOIN sources s ON s.id = e.source"
	}
	g := p.groupSQL(absMinute, "e.link")
	cond := ""
	if len(where) > 0 {
		cond = " AND " + strings.Join(where, " AND ")
	}
	inner := func(from, filter string) string {
		return `SELECT g, sum(n), sum(v) FROM (
	SELECT ` + g + ` AS g, e.day AS d, sum(e.clicks) AS n, count(DISTINCT nullif(e.visitor, 0)) AS v
	FROM ` + from + joins + ` WHERE ` + filter + cond + `
	GROUP BY g, d) GROUP BY g`
	}
	if perLink != nil {
		// One seek per link and day: [link, day, first minute, end minute].
		var rs [][4]int64
		for l, ranges := range perLink {
			for _, r := range ranges {
				for d := r[0] / 1440; d*1440 < r[1]; d++ {
					rs = append(rs, [4]int64{l, d, max(r[0]-d*1440, 0), min(r[1]-d*1440, 1440)})
				}
			}
		}
		if len(rs) == 0 {
			return nil
		}
		if len(rs) <= maxRangeRows {
			b, _ := json.Marshal(rs)
			return scanInto(ctx, conn, a, `WITH r AS (SELECT value ->> 0 AS link, value ->> 1 AS day, value ->> 2 AS lo, value ->> 3 AS hi FROM json_each(?))
`+inner("r CROSS JOIN events e ON e.day = r.day AND e.link = r.link AND e.minute >= r.lo AND e.minute < r.hi", "1"), string(b))
		}
	}
	linkCond, linkArg := "e.link IN (SELECT id FROM links WHERE namespace = ?)", any(p.ns)
	if p.links != nil {
		b, _ := json.Marshal(p.links)
		linkCond, linkArg = "e.link IN (SELECT value FROM json_each(?))", string(b)
	}
	for _, r := range segs {
		if err := scanInto(ctx, conn, a, inner("events e", "e.day >= ? AND e.day <= ? AND "+absMinute+" >= ? AND "+absMinute+" < ? AND "+linkCond),
			r[0]/1440, (r[1]-1)/1440, r[0], r[1], linkArg); err != nil {
			return err
		}
	}
	return nil
}

func (p *plan) needsClients() bool {
	switch p.dim {
	case analytics.DimDevice, analytics.DimOS, analytics.DimBrowser, analytics.DimCountry:
		return true
	}
	for _, f := range p.filters {
		if f.dim <= analytics.DimCountry {
			return true
		}
	}
	return p.q.ExcludeBots
}

func (p *plan) needsSources() bool {
	if p.dim >= analytics.DimReferrer {
		return true
	}
	for _, f := range p.filters {
		if f.dim >= analytics.DimReferrer {
			return true
		}
	}
	return false
}

func scanInto(ctx context.Context, conn *sql.Conn, a acc, q string, args ...any) error {
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k, n, v int64
		if err := rows.Scan(&k, &n, &v); err != nil {
			return err
		}
		a.add(k, n, v)
	}
	return rows.Err()
}

// rolledRuns splits the days of [p.lo, p.hi) into runs of rolled-up whole
// days (rollups) and the minute ranges left to raw events.
func (s *Store) rolledRuns(ctx context.Context, conn *sql.Conn, p *plan) (runs [][2]int64, raw [][2]int64, err error) {
	d0, d1 := (p.lo+1439)/1440, p.hi/1440 // whole days inside the range
	done := map[int64]bool{}
	if d0 < d1 {
		rows, err := conn.QueryContext(ctx, "SELECT day FROM rolled_days WHERE done AND day >= ? AND day < ?", d0, d1)
		if err != nil {
			return nil, nil, err
		}
		for rows.Next() {
			var d int64
			if err := rows.Scan(&d); err != nil {
				rows.Close()
				return nil, nil, err
			}
			done[d] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
	}
	cur := p.lo
	for d := d0; d < d1; d++ {
		if !done[d] {
			continue
		}
		if cur < d*1440 {
			raw = appendRange(raw, cur, d*1440)
		}
		if n := len(runs); n > 0 && runs[n-1][1] == d {
			runs[n-1][1] = d + 1
		} else {
			runs = append(runs, [2]int64{d, d + 1})
		}
		cur = (d + 1) * 1440
	}
	if cur < p.hi {
		raw = appendRange(raw, cur, p.hi)
	}
	return runs, raw, nil
}

func appendRange(rs [][2]int64, lo, hi int64) [][2]int64 {
	if n := len(rs); n > 0 && rs[n-1][1] == lo {
		rs[n-1][1] = hi
		return rs
	}
	return append(rs, [2]int64{lo, hi})
}

// rollupPart answers from the daily rollups for rolled-up days and from
// raw events for the rest: link_days for time series and top links,
// ws_values for a namespace's breakdowns (and its time series: a visitor
// has one device, so the device rows sum to the day's distinct visitors),
// link_values for one link's breakdowns on its detailed days.
func (s *Store) rollupPart(ctx context.Context, conn *sql.Conn, p *plan, a acc) error {
	runs, raw, err := s.rolledRuns(ctx, conn, p)
	if err != nil {
		return err
	}
	bot := ""
	if p.q.ExcludeBots {
		bot = " AND bot = 0"
	}
	dayKey := "day"
	if p.q.GroupBy == analytics.GroupByTimeseries {
		dayKey = localMinuteSQL("day * 1440", p.pieces) + " / 1440"
	}
	perLink := map[int64][][2]int64{}
	for _, r := range runs {
		switch {
		case p.q.GroupBy == analytics.GroupByLink:
			// One range scan per link, no sort: a GROUP BY over the rows of
			// every link of a namespace costs twice as much (measured).
			n, v := "clicks + bot_clicks", "visitors + bot_visitors"
			if p.q.ExcludeBots {
				n, v = "clicks", "visitors"
			}
			from, arg := "links l WHERE l.namespace = ?3", any(p.ns)
			if p.links != nil {
				b, _ := json.Marshal(p.links)
				from, arg = "(SELECT value AS id FROM json_each(?3)) l", string(b)
			}
			sub := func(col string) string {
				return "coalesce((SELECT sum(" + col + ") FROM link_days WHERE link = l.id AND day >= ?1 AND day < ?2), 0)"
			}
			if err := scanInto(ctx, conn, a, `SELECT id, n, v FROM (SELECT l.id AS id, `+sub(n)+` AS n, `+sub(v)+` AS v FROM `+from+`) WHERE n > 0`, r[0], r[1], arg); err != nil {
				return err
			}
		case p.q.GroupBy == analytics.GroupByTimeseries && p.links != nil:
			n, v := "ld.clicks + ld.bot_clicks", "ld.visitors + ld.bot_visitors"
			if p.q.ExcludeBots {
				n, v = "ld.clicks", "ld.visitors"
			}
			from, args := p.linkSource()
			if err := scanInto(ctx, conn, a, `SELECT `+strings.ReplaceAll(dayKey, "day", "ld.day")+`, sum(`+n+`), sum(`+v+`) FROM `+from+
				` CROSS JOIN link_days ld ON ld.link = l.id AND ld.day >= ? AND ld.day < ? GROUP BY 1`, append(args, r[0], r[1])...); err != nil {
				return err
			}
		case p.links == nil:
			dim, key := int(p.dim), "value"
			if p.q.GroupBy == analytics.GroupByTimeseries {
				dim, key = int(analytics.DimDevice), dayKey
			}
			if err := scanInto(ctx, conn, a, `SELECT `+key+`, sum(clicks), sum(visitors) FROM ws_values
				WHERE namespace = ? AND dim = ? AND day >= ? AND day < ?`+bot+` GROUP BY 1`, p.ns, dim, r[0], r[1]); err != nil {
				return err
			}
		default: // one link's breakdown
			l := p.links[0]
			if err := scanInto(ctx, conn, a, `SELECT value, sum(clicks), sum(visitors) FROM link_values
				WHERE link = ? AND dim = ? AND day >= ? AND day < ?`+bot+` GROUP BY 1`, l, int(p.dim), r[0], r[1]); err != nil {
				return err
			}
			rows, err := conn.QueryContext(ctx, "SELECT day FROM link_days WHERE link = ? AND day >= ? AND day < ? AND NOT detail", l, r[0], r[1])
			if err != nil {
				return err
			}
			for rows.Next() {
				var d int64
				if err := rows.Scan(&d); err != nil {
					rows.Close()
					return err
				}
				perLink[l] = appendRange(perLink[l], d*1440, (d+1)*1440)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
	}
	if len(perLink) > 0 {
		l := p.links[0]
		for _, r := range raw {
			perLink[l] = appendRange(perLink[l], r[0], r[1])
		}
		return s.rawPart(ctx, conn, p, nil, perLink, a)
	}
	if len(raw) > 0 {
		return s.rawPart(ctx, conn, p, raw, nil, a)
	}
	return nil
}

// linkSource is the FROM of the query's links as l (id).
func (p *plan) linkSource() (string, []any) {
	if p.links == nil {
		return "links l", nil // with the namespace condition in the ON clause below
	}
	b, _ := json.Marshal(p.links)
	return "(SELECT value AS id FROM json_each(?)) l", []any{string(b)}
}

// monthsPart answers from link_months for rolled-up months in the range
// and from raw events for the rest.
func (s *Store) monthsPart(ctx context.Context, conn *sql.Conn, p *plan, a acc) error {
	m0, m1 := monthOfDay(p.lo/1440), monthOfDay((p.hi-1)/1440)+1
	done, err := queryInts(ctx, conn, "SELECT month FROM rolled_months WHERE done AND month >= ? AND month < ?", m0, m1)
	if err != nil {
		return err
	}
	var raw [][2]int64
	cur := p.lo
	for _, m := range done {
		lo, hi := monthStartDay(m)*1440, monthStartDay(m+1)*1440
		if cur < lo {
			raw = appendRange(raw, cur, lo)
		}
		cur = max(cur, min(hi, p.hi))
		if hi > p.hi {
			continue // a month not over in the range: raw events
		}
		key := ""
		switch p.q.GroupBy {
		case analytics.GroupByTimeseries:
			key = localMinuteSQL(fmt.Sprint(monthStartDay(m)*1440), p.pieces) + " / 1440"
		case analytics.GroupByLink:
			key = "lm.link"
		default:
			key = valueExpr[p.dim]
		}
		where := p.dimFilterSQL()
		cond := ""
		if len(where) > 0 {
			cond = " AND " + strings.Join(where, " AND ")
		}
		from, args := p.linkSource()
		args = append(args, m)
		nsCond := ""
		if p.links == nil {
			nsCond = " AND l.namespace = ?"
			args = append(args, p.ns)
		}
		if err := scanInto(ctx, conn, a, `SELECT `+key+`, sum(lm.clicks), sum(lm.visitors) FROM `+from+
			` CROSS JOIN link_months lm ON lm.link = l.id AND lm.month = ?`+nsCond+`
			JOIN clients c ON c.id = lm.client JOIN sources s ON s.id = lm.source WHERE 1`+cond+` GROUP BY 1`, args...); err != nil {
			return err
		}
	}
	if cur < p.hi {
		raw = appendRange(raw, cur, p.hi)
	}
	if len(raw) > 0 {
		return s.rawPart(ctx, conn, p, raw, nil, a)
	}
	return nil
}

func queryInts(ctx context.Context, conn *sql.Conn, q string, args ...any) ([]int64, error) {
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// rows turns the sums into the answer's rows: a time series with every
// bucket (zeros included), or groups named and ranked by clicks.
func (s *Store) rows(ctx context.Context, conn *sql.Conn, p *plan, a acc) ([]analytics.Row, error) {
	if p.q.GroupBy == analytics.GroupByTimeseries {
		return p.series(a), nil
	}
	out := make([]analytics.Row, 0, len(a))
	ids := make([]int64, 0, len(a))
	for k, c := range a {
		out = append(out, analytics.Row{Clicks: c.clicks, Visitors: c.visitors})
		ids = append(ids, k)
	}
	switch {
	case p.q.GroupBy == analytics.GroupByLink:
		refs, err := linkRefs(ctx, conn, ids)
		if err != nil {
			return nil, err
		}
		for i, id := range ids {
			r := refs[id]
			out[i].Key, out[i].Link = r.UID, &r
		}
	case p.dim == analytics.DimDevice:
		for i, id := range ids {
			out[i].Key = analytics.Device(id).String()
		}
	default:
		names, err := strNames(ctx, conn, ids)
		if err != nil {
			return nil, err
		}
		for i, id := range ids {
			out[i].Key = names[id]
		}
	}
	slices.SortFunc(out, func(x, y analytics.Row) int {
		if c := cmp.Compare(y.Clicks, x.Clicks); c != 0 {
			return c
		}
		return strings.Compare(x.Key, y.Key)
	})
	if p.q.Limit > 0 && len(out) > p.q.Limit {
		out = out[:p.q.Limit]
	}
	return out, nil
}

// series is every bucket of the range with its sums. The group keys are
// wall-clock hour or day numbers in the query's zone.
func (p *plan) series(a acc) []analytics.Row {
	g := p.q.Granularity
	wall := func(t time.Time) string { // a bucket's wall-clock name
		switch g {
		case analytics.Hour:
			return t.Format("2006-01-02T15")
		case analytics.Day:
			return t.Format(time.DateOnly)
		}
		return t.Format("2006-01")
	}
	sums := map[string]*counts{}
	for k, c := range a {
		var t time.Time
		if g == analytics.Hour {
			t = time.Unix(k*3600, 0).UTC()
		} else {
			t = time.Unix(k*86400, 0).UTC()
		}
		w := wall(t)
		if sums[w] == nil {
			sums[w] = &counts{}
		}
		sums[w].clicks += c.clicks
		sums[w].visitors += c.visitors
	}
	var out []analytics.Row
	seen := map[string]bool{}
	end := time.Unix(p.hi*60, 0)
	for t := g.Truncate(time.Unix(p.lo*60, 0).In(p.loc)); t.Before(end); t = g.Next(t) {
		w := wall(t)
		if seen[w] { // the repeated hour when clocks go back
			continue
		}
		seen[w] = true
		r := analytics.Row{Key: t.Format(time.RFC3339), Time: t}
		if c := sums[w]; c != nil {
			r.Clicks, r.Visitors = c.clicks, c.visitors
		}
		out = append(out, r)
	}
	return out
}

func linkRefs(ctx context.Context, conn *sql.Conn, ids []int64) (map[int64]analytics.LinkRef, error) {
	b, _ := json.Marshal(ids)
	rows, err := conn.QueryContext(ctx, `SELECT l.id, l.uid, n.s, l.name, l.domain, l.key FROM links l JOIN strs n ON n.id = l.namespace
		WHERE l.id IN (SELECT value FROM json_each(?))`, string(b))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[int64]analytics.LinkRef, len(ids))
	for rows.Next() {
		var id int64
		var r analytics.LinkRef
		if err := rows.Scan(&id, &r.UID, &r.Namespace, &r.Name, &r.Domain, &r.Key); err != nil {
			return nil, err
		}
		out[id] = r
	}
	return out, rows.Err()
}

func strNames(ctx context.Context, conn *sql.Conn, ids []int64) (map[int64]string, error) {
	b, _ := json.Marshal(ids)
	rows, err := conn.QueryContext(ctx, "SELECT id, s FROM strs WHERE id IN (SELECT value FROM json_each(?))", string(b))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[int64]string, len(ids))
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			return nil, err
		}
		out[id] = s
	}
	return out, rows.Err()
}
