package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/sqlplan"
)

// Query answers q. See the package doc for where answers come from.
func (s *Store) Query(ctx context.Context, q analytics.Query) (analytics.Result, error) {
	if err := q.Validate(); err != nil {
		return analytics.Result{}, err
	}
	p, err := sqlplan.Route(q, s.now(), s.retention())
	if err != nil {
		return analytics.Result{}, err
	}
	res := p.Result()
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return analytics.Result{}, fmt.Errorf("analytics query: %w", err)
	}
	defer conn.Close()
	ok, err := s.resolve(ctx, conn, p)
	if err != nil {
		return analytics.Result{}, fmt.Errorf("analytics query: %w", err)
	}
	a := sqlplan.Acc{}
	if ok {
		switch {
		case p.Src == analytics.SourceEvents:
			err = s.rawPart(ctx, conn, p, [][2]int64{{p.Lo, p.Hi}}, nil, a)
		case p.Monthly:
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

// resolve turns names into ids; false when nothing can match.
func (s *Store) resolve(ctx context.Context, conn *sql.Conn, p *sqlplan.Plan) (bool, error) {
	err := conn.QueryRowContext(ctx, "SELECT id FROM strs WHERE s = ?", p.Q.Namespace).Scan(&p.NS)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if p.Q.Links != nil {
		uids, _ := json.Marshal(p.Q.Links)
		rows, err := conn.QueryContext(ctx, "SELECT id FROM links WHERE namespace = ? AND uid IN (SELECT value FROM json_each(?)) ORDER BY id", p.NS, string(uids))
		if err != nil {
			return false, err
		}
		p.Links = []int64{}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return false, err
			}
			p.Links = append(p.Links, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return false, err
		}
		if len(p.Links) == 0 {
			return false, nil
		}
	}
	dims := make([]analytics.Dimension, 0, len(p.Q.Filters))
	for d := range p.Q.Filters {
		dims = append(dims, d)
	}
	slices.Sort(dims)
	for _, d := range dims {
		f := sqlplan.Filter{Dim: d}
		for _, v := range p.Q.Filters[d] {
			if d == analytics.DimDevice {
				dev, _ := analytics.ParseDevice(v)
				f.IDs = append(f.IDs, int64(dev))
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
			f.IDs = append(f.IDs, id)
		}
		if len(f.IDs) == 0 {
			return false, nil
		}
		p.Filters = append(p.Filters, f)
	}
	return true, nil
}

// maxRangeRows bounds the (link, day) pairs a raw query seeks one by one;
// past it the query scans the days' rows and keeps the links' (a link set
// of thousands is most of its namespace anyway).
const maxRangeRows = 20000

// rawPart adds the raw events in the minute ranges segs (or, with
// perLink, each link's own ranges) to a. Visitors are distinct per group
// and UTC day, summed over days.
func (s *Store) rawPart(ctx context.Context, conn *sql.Conn, p *sqlplan.Plan, segs [][2]int64, perLink map[int64][][2]int64, a sqlplan.Acc) error {
	if perLink == nil && p.Links != nil {
		perLink = make(map[int64][][2]int64, len(p.Links))
		for _, l := range p.Links {
			perLink[l] = segs
		}
	}
	where := p.DimFilterSQL()
	joins := ""
	if p.NeedsClients() {
		joins += " JOIN clients c ON c.id = e.client"
	}
	if p.NeedsSources() {
		joins += " JOIN sources s ON s.id = e.source"
	}
	g := p.GroupSQL(sqlplan.AbsMinute, "e.link")
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
	linkCond, linkArg := "e.link IN (SELECT id FROM links WHERE namespace = ?)", any(p.NS)
	if p.Links != nil {
		b, _ := json.Marshal(p.Links)
		linkCond, linkArg = "e.link IN (SELECT value FROM json_each(?))", string(b)
	}
	for _, r := range segs {
		if err := scanInto(ctx, conn, a, inner("events e", "e.day >= ? AND e.day <= ? AND "+sqlplan.AbsMinute+" >= ? AND "+sqlplan.AbsMinute+" < ? AND "+linkCond),
			r[0]/1440, (r[1]-1)/1440, r[0], r[1], linkArg); err != nil {
			return err
		}
	}
	return nil
}

func scanInto(ctx context.Context, conn *sql.Conn, a sqlplan.Acc, q string, args ...any) error {
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
		a.Add(k, n, v)
	}
	return rows.Err()
}

// rolledRuns splits the days of the range into runs of rolled-up whole
// days (rollups) and the minute ranges left to raw events.
func (s *Store) rolledRuns(ctx context.Context, conn *sql.Conn, p *sqlplan.Plan) (runs [][2]int64, raw [][2]int64, err error) {
	done := map[int64]bool{}
	if d0, d1 := p.WholeDays(); d0 < d1 {
		days, err := queryInts(ctx, conn, "SELECT day FROM rolled_days WHERE done AND day >= ? AND day < ?", d0, d1)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range days {
			done[d] = true
		}
	}
	runs, raw = p.RolledRuns(done)
	return runs, raw, nil
}

// rollupPart answers from the daily rollups for rolled-up days and from
// raw events for the rest: link_days for time series and top links,
// ws_values for a namespace's breakdowns (and its time series: a visitor
// has one device, so the device rows sum to the day's distinct visitors),
// link_values for one link's breakdowns on its detailed days.
func (s *Store) rollupPart(ctx context.Context, conn *sql.Conn, p *sqlplan.Plan, a sqlplan.Acc) error {
	runs, raw, err := s.rolledRuns(ctx, conn, p)
	if err != nil {
		return err
	}
	bot := ""
	if p.Q.ExcludeBots {
		bot = " AND bot = 0"
	}
	dayKey := "day"
	if p.Q.GroupBy == analytics.GroupByTimeseries {
		dayKey = p.LocalDaySQL("day")
	}
	if p.Q.GroupBy == analytics.GroupByLink {
		if err := s.topLinks(ctx, conn, p, runs, a); err != nil {
			return err
		}
		runs = nil
	}
	perLink := map[int64][][2]int64{}
	for _, r := range runs {
		switch {
		case p.Q.GroupBy == analytics.GroupByTimeseries && p.Links != nil:
			n, v := "ld.clicks + ld.bot_clicks", "ld.visitors + ld.bot_visitors"
			if p.Q.ExcludeBots {
				n, v = "ld.clicks", "ld.visitors"
			}
			from, args := linkSource(p)
			if err := scanInto(ctx, conn, a, `SELECT `+strings.ReplaceAll(dayKey, "day", "ld.day")+`, sum(`+n+`), sum(`+v+`) FROM `+from+
				` CROSS JOIN link_days ld ON ld.link = l.id AND ld.day >= ? AND ld.day < ? GROUP BY 1`, append(args, r[0], r[1])...); err != nil {
				return err
			}
		case p.Links == nil:
			dim, key := int(p.Dim), "value"
			if p.Q.GroupBy == analytics.GroupByTimeseries {
				dim, key = int(analytics.DimDevice), dayKey
			}
			if err := scanInto(ctx, conn, a, `SELECT `+key+`, sum(clicks), sum(visitors) FROM ws_values
				WHERE namespace = ? AND dim = ? AND day >= ? AND day < ?`+bot+` GROUP BY 1`, p.NS, dim, r[0], r[1]); err != nil {
				return err
			}
		default: // one link's breakdown
			l := p.Links[0]
			if err := scanInto(ctx, conn, a, `SELECT value, sum(clicks), sum(visitors) FROM link_values
				WHERE link = ? AND dim = ? AND day >= ? AND day < ?`+bot+` GROUP BY 1`, l, int(p.Dim), r[0], r[1]); err != nil {
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
				perLink[l] = sqlplan.AppendRange(perLink[l], d*1440, (d+1)*1440)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
	}
	if len(perLink) > 0 {
		l := p.Links[0]
		for _, r := range raw {
			perLink[l] = sqlplan.AppendRange(perLink[l], r[0], r[1])
		}
		return s.rawPart(ctx, conn, p, nil, perLink, a)
	}
	if len(raw) > 0 {
		return s.rawPart(ctx, conn, p, raw, nil, a)
	}
	return nil
}

// topLinks adds each link's sums over the rolled-up day runs: link_mtotals
// for the months the runs cover whole, link_days for the other days. One
// range scan per link and part, no sort: a GROUP BY over the rows of every
// link of a namespace costs twice as much (measured).
func (s *Store) topLinks(ctx context.Context, conn *sql.Conn, p *sqlplan.Plan, runs [][2]int64, a sqlplan.Acc) error {
	var current map[int64]bool
	if len(runs) > 0 {
		ms, err := queryInts(ctx, conn, "SELECT month FROM rolled_mtotals WHERE month >= ? AND month <= ?",
			sqlplan.MonthOfDay(runs[0][0]), sqlplan.MonthOfDay(runs[len(runs)-1][1]))
		if err != nil {
			return err
		}
		current = make(map[int64]bool, len(ms))
		for _, m := range ms {
			current[m] = true
		}
	}
	months, days := sqlplan.MonthTotalRuns(runs, current)
	n, v := "clicks + bot_clicks", "visitors + bot_visitors"
	if p.Q.ExcludeBots {
		n, v = "clicks", "visitors"
	}
	from, args := "links l WHERE l.namespace = ?", []any{p.NS}
	if p.Links != nil {
		b, _ := json.Marshal(p.Links)
		from, args = "(SELECT value AS id FROM json_each(?)) l", []any{string(b)}
	}
	var nparts, vparts []string
	var partArgs []any
	for _, r := range days {
		nparts = append(nparts, "coalesce((SELECT sum("+n+") FROM link_days WHERE link = l.id AND day >= ? AND day < ?), 0)")
		vparts = append(vparts, "coalesce((SELECT sum("+v+") FROM link_days WHERE link = l.id AND day >= ? AND day < ?), 0)")
		partArgs = append(partArgs, r[0], r[1])
	}
	if len(months) > 0 {
		nparts = append(nparts, "coalesce((SELECT sum("+n+") FROM link_mtotals WHERE link = l.id AND month >= ? AND month <= ?), 0)")
		vparts = append(vparts, "coalesce((SELECT sum("+v+") FROM link_mtotals WHERE link = l.id AND month >= ? AND month <= ?), 0)")
		// MonthTotalRuns' months may skip one (not current): list them.
		partArgs = append(partArgs, months[0], months[len(months)-1])
		if int64(len(months)) != months[len(months)-1]-months[0]+1 {
			b, _ := json.Marshal(months)
			nparts[len(nparts)-1] = "coalesce((SELECT sum(" + n + ") FROM json_each(?) m CROSS JOIN link_mtotals lm ON lm.link = l.id AND lm.month = m.value), 0)"
			vparts[len(vparts)-1] = "coalesce((SELECT sum(" + v + ") FROM json_each(?) m CROSS JOIN link_mtotals lm ON lm.link = l.id AND lm.month = m.value), 0)"
			partArgs = append(partArgs[:len(partArgs)-2], string(b))
		}
	}
	if len(nparts) == 0 {
		return nil
	}
	// The link set's parameter comes last in the text: args in order.
	q := `SELECT id, n, v FROM (SELECT l.id AS id, ` + strings.Join(nparts, " + ") + ` AS n, ` + strings.Join(vparts, " + ") + ` AS v FROM ` + from + `) WHERE n > 0`
	all := append(append(append([]any{}, partArgs...), partArgs...), args...)
	return scanInto(ctx, conn, a, q, all...)
}

// linkSource is the FROM of the query's links as l (id).
func linkSource(p *sqlplan.Plan) (string, []any) {
	if p.Links == nil {
		return "links l", nil // with the namespace condition in the ON clause below
	}
	b, _ := json.Marshal(p.Links)
	return "(SELECT value AS id FROM json_each(?)) l", []any{string(b)}
}

// monthsPart answers from link_months for rolled-up months the range
// covers whole and from raw events for the rest.
func (s *Store) monthsPart(ctx context.Context, conn *sql.Conn, p *sqlplan.Plan, a sqlplan.Acc) error {
	m0, m1 := sqlplan.MonthOfDay(p.Lo/1440), sqlplan.MonthOfDay((p.Hi-1)/1440)+1
	done, err := queryInts(ctx, conn, "SELECT month FROM rolled_months WHERE done AND month >= ? AND month < ? ORDER BY month", m0, m1)
	if err != nil {
		return err
	}
	months, raw := p.MonthRuns(done)
	for _, m := range months {
		key := ""
		switch p.Q.GroupBy {
		case analytics.GroupByTimeseries:
			key = p.LocalDaySQL(fmt.Sprint(sqlplan.MonthStartDay(m)))
		case analytics.GroupByLink:
			key = "lm.link"
		default:
			key = sqlplan.ValueExpr[p.Dim]
		}
		from, args := linkSource(p)
		args = append(args, m)
		nsCond := ""
		if p.Links == nil {
			nsCond = " AND l.namespace = ?"
			args = append(args, p.NS)
		}
		if err := scanInto(ctx, conn, a, `SELECT `+key+`, sum(lm.clicks), sum(lm.visitors) FROM `+from+
			` CROSS JOIN link_months lm ON lm.link = l.id AND lm.month = ?`+nsCond+`
			JOIN clients c ON c.id = lm.client JOIN sources s ON s.id = lm.source WHERE 1`+p.FilterCond()+` GROUP BY 1`, args...); err != nil {
			return err
		}
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
func (s *Store) rows(ctx context.Context, conn *sql.Conn, p *sqlplan.Plan, a sqlplan.Acc) ([]analytics.Row, error) {
	if p.Q.GroupBy == analytics.GroupByTimeseries {
		return p.Series(a), nil
	}
	out, ids := sqlplan.Groups(a)
	switch {
	case p.Q.GroupBy == analytics.GroupByLink:
		refs, err := linkRefs(ctx, conn, ids)
		if err != nil {
			return nil, err
		}
		for i, id := range ids {
			r := refs[id]
			out[i].Key, out[i].Link = r.UID, &r
		}
	case p.Dim == analytics.DimDevice:
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
	return p.Rank(out), nil
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
