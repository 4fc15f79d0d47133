package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/sqlplan"
)

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Query answers q, routed as the SQLite store routes it (sqlplan), in one
// read-only REPEATABLE READ transaction: which days are rolled up and the
// rollups read are one snapshot, whatever Maintain does meanwhile.
func (s *Store) Query(ctx context.Context, q analytics.Query) (analytics.Result, error) {
	if err := q.Validate(); err != nil {
		return analytics.Result{}, err
	}
	p, err := sqlplan.Route(q, s.now(), s.retention())
	if err != nil {
		return analytics.Result{}, err
	}
	res := p.Result()
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		ok, err := resolve(ctx, tx, p)
		if err != nil {
			return err
		}
		a := sqlplan.Acc{}
		if ok {
			switch {
			case p.Src == analytics.SourceEvents:
				err = rawPart(ctx, tx, p, [][2]int64{{p.Lo, p.Hi}}, nil, a)
			case p.Monthly:
				err = monthsPart(ctx, tx, p, a)
			default:
				err = rollupPart(ctx, tx, p, a)
			}
			if err != nil {
				return err
			}
		}
		res.Rows, err = answerRows(ctx, tx, p, a)
		return err
	})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return analytics.Result{}, fmt.Errorf("analytics query: %w", err)
	}
	return res, nil
}

// resolve turns names into ids; false when nothing can match.
func resolve(ctx context.Context, tx querier, p *sqlplan.Plan) (bool, error) {
	var ns int32
	err := tx.QueryRow(ctx, "SELECT id FROM strs WHERE s = $1", p.Q.Namespace).Scan(&ns)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	p.NS = int64(ns)
	if p.Q.Links != nil {
		ids, err := queryInts(ctx, tx, "SELECT id FROM links WHERE namespace = $1 AND uid = ANY($2) ORDER BY id", ns, p.Q.Links)
		if err != nil {
			return false, err
		}
		if len(ids) == 0 {
			return false, nil
		}
		p.Links = ids
	}
	dims := make([]analytics.Dimension, 0, len(p.Q.Filters))
	for d := range p.Q.Filters {
		dims = append(dims, d)
	}
	slices.Sort(dims)
	for _, d := range dims {
		f := sqlplan.Filter{Dim: d}
		if d == analytics.DimDevice {
			for _, v := range p.Q.Filters[d] {
				dev, _ := analytics.ParseDevice(v)
				f.IDs = append(f.IDs, int64(dev))
			}
		} else if f.IDs, err = queryInts(ctx, tx, "SELECT id FROM strs WHERE s = ANY($1) ORDER BY id", p.Q.Filters[d]); err != nil {
			return false, err
		}
		if len(f.IDs) == 0 {
			return false, nil
		}
		p.Filters = append(p.Filters, f)
	}
	return true, nil
}

func queryInts(ctx context.Context, tx querier, q string, args ...any) ([]int64, error) {
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

func scanInto(ctx context.Context, tx querier, a sqlplan.Acc, q string, args ...any) error {
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	var k, n, v int64
	_, err = pgx.ForEachRow(rows, []any{&k, &n, &v}, func() error {
		a.Add(k, n, v)
		return nil
	})
	return err
}

func int32s(ids []int64) []int32 {
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = int32(id)
	}
	return out
}

// eventClicks is an event row's clicks (NULL for 1: see migration 3).
const eventClicks = "coalesce(e.clicks, 1)"

// maxRangeRows bounds the (link, day) pairs a raw query seeks one by one;
// past it the query reads the days' rows and keeps the links'.
const maxRangeRows = 20000

// rawPart adds the raw events in the minute ranges segs (or, with
// perLink, each link's own ranges) to a. Visitors are distinct per group
// and UTC day, summed over days.
func rawPart(ctx context.Context, tx querier, p *sqlplan.Plan, segs [][2]int64, perLink map[int64][][2]int64, a sqlplan.Acc) error {
	if perLink == nil && p.Links != nil {
		perLink = make(map[int64][][2]int64, len(p.Links))
		for _, l := range p.Links {
			perLink[l] = segs
		}
	}
	joins := p.Joins("e.client", "e.source")
	g := p.GroupSQL("e.minute", "e.link")
	cond := p.FilterCond()
	inner := func(from, filter string) string {
		return `SELECT g, sum(n)::bigint, sum(v)::bigint FROM (
	SELECT ` + g + ` AS g, e.minute / 1440 AS d, sum(` + eventClicks + `) AS n, count(DISTINCT nullif(e.visitor, 0)) AS v
	FROM ` + from + joins + ` WHERE ` + filter + cond + `
	GROUP BY 1, 2) x GROUP BY g`
	}
	if p.Links != nil || perLink != nil {
		inner = func(from, filter string) string { return linkInner(p, g, from, filter+cond) }
	}
	if len(perLink) == 1 {
		// One link: its rows through each day partition's (link) index,
		// a statement per contiguous range. Joined with unnest(link,
		// range) instead, the planner
		// hashes every row of the days' partitions when the link is hot
		// (4.8 s CPU for the hottest link's 30 days, 123 000 rows, against
		// 3.3 million read).
		for l, ranges := range perLink {
			segs, perLink = ranges, nil
			p2 := *p
			p2.Links = []int64{l}
			p = &p2
		}
	}
	if perLink != nil {
		// One seek per link and day.
		var link, lo, hi []int32
		first, end := int64(1<<62), int64(0)
		for l, ranges := range perLink {
			for _, r := range ranges {
				for d := r[0] / 1440; d*1440 < r[1]; d++ {
					link = append(link, int32(l))
					lo, hi = append(lo, int32(max(r[0], d*1440))), append(hi, int32(min(r[1], (d+1)*1440)))
					first, end = min(first, r[0]), max(end, r[1])
				}
			}
		}
		if len(link) == 0 {
			return nil
		}
		if len(link) <= maxRangeRows {
			// Both forms of the raw events (see rawEvents): a packed row
			// is a link's day, found through its partition's (link) index.
			const ranges = "unnest($1::integer[], $2::integer[], $3::integer[]) AS r(link, lo, hi)"
			return scanInto(ctx, tx, a, inner(`(SELECT f.visitor, f.minute, f.link, f.client, f.source, f.clicks FROM `+ranges+`
	JOIN events f ON f.link = r.link AND f.minute >= r.lo AND f.minute < r.hi WHERE f.minute >= $4 AND f.minute < $5
UNION ALL SELECT u.visitor, p.day * 1440 + u.m, p.link, u.client, u.source, u.clicks FROM `+ranges+`
	JOIN events_packed p ON p.link = r.link AND p.day = r.lo / 1440
	CROSS JOIN LATERAL unnest(p.visitors, p.minutes, p.clients, p.sources, p.clicks) AS u(visitor, m, client, source, clicks)
	WHERE p.day >= $4 / 1440 AND p.day < ($5 + 1439) / 1440 AND p.day * 1440 + u.m >= r.lo AND p.day * 1440 + u.m < r.hi) e`, "true"),
				link, lo, hi, first, end)
		}
	}
	linkCond, linkArg := func(t string) string { return t + ".link IN (SELECT id FROM links WHERE namespace = $1)" }, any(int32(p.NS))
	if p.Links != nil {
		linkCond, linkArg = func(t string) string { return t + ".link = ANY($1)" }, int32s(p.Links)
	}
	for _, r := range segs {
		if err := scanInto(ctx, tx, a, inner(rawEvents("$2", "$3", linkCond), "true"),
			linkArg, r[0], r[1]); err != nil {
			return err
		}
	}
	return nil
}

// linkInner is rawPart's statement for the events of a few links (a
// link's events of today, of its days not detailed in link_values): the
// rows first, then the dictionary rows of the ids they hold, hashed. The
// plain join probes the dictionaries' primary keys once per row; for the
// hottest link's 3 229 rows of a day that was 11 600 buffer visits into
// sources (478 000 rows, a 3-level index) against 1 050 for its 263
// distinct ids, which made its top-10 by referrer or UTM value take twice
// the CPU of one by country (clients, 5 000 rows, is hashed whole). The
// row estimates of a link's range are those of an average link whatever
// the link, so the planner is not asked: the CTEs are materialized.
func linkInner(p *sqlplan.Plan, g, from, where string) string {
	with := "WITH ev AS MATERIALIZED (SELECT e.* FROM " + from + ")"
	joins := ""
	if p.NeedsClients() {
		with += ",\n\tc AS MATERIALIZED (SELECT * FROM clients WHERE id IN (SELECT client FROM ev))"
		joins += " JOIN c ON c.id = e.client"
	}
	if p.NeedsSources() {
		with += ",\n\ts AS MATERIALIZED (SELECT * FROM sources WHERE id IN (SELECT source FROM ev))"
		joins += " JOIN s ON s.id = e.source"
	}
	return with + `
SELECT g, sum(n)::bigint, sum(v)::bigint FROM (
	SELECT ` + g + ` AS g, e.minute / 1440 AS d, sum(` + eventClicks + `) AS n, count(DISTINCT nullif(e.visitor, 0)) AS v
	FROM ev e` + joins + ` WHERE ` + where + `
	GROUP BY 1, 2) x GROUP BY g`
}

// rolledRuns splits the range into runs of rolled-up whole days (rollups)
// and the minute ranges left to raw events.
func rolledRuns(ctx context.Context, tx querier, p *sqlplan.Plan) (runs, raw [][2]int64, err error) {
	done := map[int64]bool{}
	if d0, d1 := p.WholeDays(); d0 < d1 {
		days, err := queryInts(ctx, tx, "SELECT day FROM rolled_days WHERE rolled = seq AND day >= $1 AND day < $2", d0, d1)
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

// topLinks adds each link's sums over the rolled-up day runs: link_mtotals
// for the whole months whose totals are current, link_days for the other
// days. n and v are the clicks and visitors expressions over ld.
func topLinks(ctx context.Context, tx querier, p *sqlplan.Plan, runs [][2]int64, n, v string, a sqlplan.Acc) error {
	if len(runs) == 0 {
		return nil
	}
	ms, err := queryInts(ctx, tx, `SELECT month FROM rolled_mtotals rm WHERE month >= $1 AND month <= $2
	AND sig = (SELECT coalesce(sum(seq), 0) FROM rolled_days d WHERE d.day >= rm.first_day AND d.day < rm.end_day)`,
		sqlplan.MonthOfDay(runs[0][0]), sqlplan.MonthOfDay(runs[len(runs)-1][1]))
	if err != nil {
		return err
	}
	current := make(map[int64]bool, len(ms))
	for _, m := range ms {
		current[m] = true
	}
	months, days := sqlplan.MonthTotalRuns(runs, current)
	links := func(table string) (string, any) {
		if p.Links != nil {
			return table + " ld WHERE ld.link = ANY($2) AND", int32s(p.Links)
		}
		return table + " ld JOIN links l ON l.id = ld.link AND l.namespace = $2 WHERE", any(int32(p.NS))
	}
	if len(months) > 0 {
		from, arg := links("link_mtotals")
		if err := scanInto(ctx, tx, a, `SELECT ld.link, sum(`+n+`)::bigint, sum(`+v+`)::bigint FROM `+from+
			` ld.month = ANY($1) GROUP BY ld.link HAVING sum(`+n+`) > 0`, int32s(months), arg); err != nil {
			return err
		}
	}
	if len(days) > 0 {
		var ds []int64
		for _, r := range days {
			for d := r[0]; d < r[1]; d++ {
				ds = append(ds, d)
			}
		}
		from, arg := links("link_days")
		if err := scanInto(ctx, tx, a, `SELECT ld.link, sum(`+n+`)::bigint, sum(`+v+`)::bigint FROM `+from+
			` ld.day = ANY($1) GROUP BY ld.link HAVING sum(`+n+`) > 0`, int32s(ds), arg); err != nil {
			return err
		}
	}
	return nil
}

// rollupPart answers from the daily rollups for rolled-up days and from
// raw events for the rest, as the SQLite store does: link_days for time
// series and top links, ws_values for a namespace's breakdowns and time
// series, link_values for one link's breakdowns on its detailed days.
func rollupPart(ctx context.Context, tx querier, p *sqlplan.Plan, a sqlplan.Acc) error {
	runs, raw, err := rolledRuns(ctx, tx, p)
	if err != nil {
		return err
	}
	bot := ""
	if p.Q.ExcludeBots {
		bot = " AND NOT u.bot"
	}
	n, v := "ld.clicks + ld.bot_clicks", "ld.visitors + ld.bot_visitors"
	if p.Q.ExcludeBots {
		n, v = "ld.clicks", "ld.visitors"
	}
	if p.Q.GroupBy == analytics.GroupByLink {
		if err := topLinks(ctx, tx, p, runs, n, v, a); err != nil {
			return err
		}
		runs = nil
	}
	perLink := map[int64][][2]int64{}
	for _, r := range runs {
		switch {
		case p.Q.GroupBy == analytics.GroupByTimeseries && p.Links != nil:
			if err := scanInto(ctx, tx, a, `SELECT `+p.LocalDaySQL("ld.day")+`, sum(`+n+`)::bigint, sum(`+v+`)::bigint FROM link_days ld
				WHERE ld.link = ANY($3) AND ld.day >= $1 AND ld.day < $2 GROUP BY 1`, r[0], r[1], int32s(p.Links)); err != nil {
				return err
			}
		case p.Links == nil:
			dim, key := int(p.Dim), "value"
			if p.Q.GroupBy == analytics.GroupByTimeseries {
				dim, key = int(analytics.DimDevice), p.LocalDaySQL("day")
			}
			if err := scanInto(ctx, tx, a, `SELECT `+key+`, sum(u.n)::bigint, sum(u.v)::bigint FROM ws_values w
				CROSS JOIN LATERAL unnest(w.vals, w.bots, w.clicks, w.visitors) AS u(value, bot, n, v)
				WHERE w.namespace = $1 AND w.dim = $2 AND w.day >= $3 AND w.day < $4`+bot+` GROUP BY 1`, int32(p.NS), dim, r[0], r[1]); err != nil {
				return err
			}
		default: // one link's breakdown
			l := p.Links[0]
			if err := scanInto(ctx, tx, a, `SELECT u.value, sum(u.n)::bigint, sum(u.v)::bigint FROM link_values lv
				CROSS JOIN LATERAL unnest(lv.dims, lv.vals, lv.bots, lv.clicks, lv.visitors) AS u(dim, value, bot, n, v)
				WHERE lv.link = $1 AND u.dim = $2 AND lv.day >= $3 AND lv.day < $4`+bot+` GROUP BY 1`, int32(l), int(p.Dim), r[0], r[1]); err != nil {
				return err
			}
			days, err := queryInts(ctx, tx, "SELECT day FROM link_days WHERE link = $1 AND day >= $2 AND day < $3 AND NOT detail ORDER BY day", int32(l), r[0], r[1])
			if err != nil {
				return err
			}
			for _, d := range days {
				perLink[l] = sqlplan.AppendRange(perLink[l], d*1440, (d+1)*1440)
			}
		}
	}
	if len(perLink) > 0 {
		l := p.Links[0]
		for _, r := range raw {
			perLink[l] = sqlplan.AppendRange(perLink[l], r[0], r[1])
		}
		return rawPart(ctx, tx, p, nil, perLink, a)
	}
	if len(raw) > 0 {
		return rawPart(ctx, tx, p, raw, nil, a)
	}
	return nil
}

// monthsPart answers from link_months for rolled-up months the range
// covers whole and from raw events for the rest.
func monthsPart(ctx context.Context, tx querier, p *sqlplan.Plan, a sqlplan.Acc) error {
	m0, m1 := sqlplan.MonthOfDay(p.Lo/1440), sqlplan.MonthOfDay((p.Hi-1)/1440)+1
	done, err := queryInts(ctx, tx, `SELECT month FROM rolled_months rm WHERE month >= $1 AND month < $2
	AND sig = (SELECT coalesce(sum(seq), 0) FROM rolled_days d WHERE d.day >= rm.first_day AND d.day < rm.end_day) ORDER BY month`, m0, m1)
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
			key = "m.link"
		default:
			key = sqlplan.ValueExpr[p.Dim]
		}
		linkCond, arg := "l.namespace = $2", any(int32(p.NS))
		if p.Links != nil {
			linkCond, arg = "m.link = ANY($2)", int32s(p.Links)
		}
		if err := scanInto(ctx, tx, a, `SELECT `+key+`, sum(lm.clicks)::bigint, sum(lm.visitors)::bigint FROM link_months m
			CROSS JOIN LATERAL unnest(m.clients, m.sources, m.clicks, m.visitors) AS lm(client, source, clicks, visitors)
			JOIN links l ON l.id = m.link JOIN clients c ON c.id = lm.client JOIN sources s ON s.id = lm.source
			WHERE m.month = $1 AND `+linkCond+p.FilterCond()+` GROUP BY 1`, m, arg); err != nil {
			return err
		}
	}
	if len(raw) > 0 {
		return rawPart(ctx, tx, p, raw, nil, a)
	}
	return nil
}

// answerRows turns the sums into the answer's rows: a time series with
// every bucket (zeros included), or groups named and ranked by clicks.
func answerRows(ctx context.Context, tx querier, p *sqlplan.Plan, a sqlplan.Acc) ([]analytics.Row, error) {
	if p.Q.GroupBy == analytics.GroupByTimeseries {
		return p.Series(a), nil
	}
	out, ids := sqlplan.Groups(a)
	switch {
	case p.Q.GroupBy == analytics.GroupByLink:
		refs := map[int64]analytics.LinkRef{}
		rows, err := tx.Query(ctx, `SELECT l.id, l.uid, n.s, l.name, l.domain, l.key FROM links l JOIN strs n ON n.id = l.namespace
			WHERE l.id = ANY($1)`, int32s(ids))
		if err != nil {
			return nil, err
		}
		var id int64
		var r analytics.LinkRef
		if _, err := pgx.ForEachRow(rows, []any{&id, &r.UID, &r.Namespace, &r.Name, &r.Domain, &r.Key}, func() error {
			refs[id] = r
			return nil
		}); err != nil {
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
		names := map[int64]string{}
		rows, err := tx.Query(ctx, "SELECT id, s FROM strs WHERE id = ANY($1)", int32s(ids))
		if err != nil {
			return nil, err
		}
		var id int64
		var name string
		if _, err := pgx.ForEachRow(rows, []any{&id, &name}, func() error {
			names[id] = name
			return nil
		}); err != nil {
			return nil, err
		}
		for i, id := range ids {
			out[i].Key = names[id]
		}
	}
	return p.Rank(out), nil
}
