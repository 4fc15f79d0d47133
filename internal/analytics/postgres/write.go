package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// maxCached bounds each dictionary cache; past it the cache starts over
// (a miss costs a round trip per batch, not per row).
const maxCached = 200_000

type linkEntry struct {
	id  int32
	ref analytics.LinkRef
}

// dictCache maps what batches name to the ids the database gave it.
// Dictionary rows are never deleted, except links (Maintain removes a
// link deleted longer than the grace ago, on whichever replica runs it): a
// cached id of such a link is only used if a click for a Link deleted days
// ago arrives, which the redirect no longer serves.
type dictCache struct {
	links   map[string]linkEntry
	strs    map[string]int32
	clients map[comboKey]int32
	sources map[comboKey]int32
}

func newDictCache() *dictCache {
	c := &dictCache{}
	c.reset()
	return c
}

func (c *dictCache) reset() {
	c.links = map[string]linkEntry{}
	c.strs = map[string]int32{"": 0}
	c.clients = map[comboKey]int32{}
	c.sources = map[comboKey]int32{}
}

// Write stores b: the strings, links and combinations it names (each a
// statement per batch for what the caches miss, committed on their own:
// a dictionary row is a fact, harmless if the batch then fails), then in
// one transaction the batch id, its events (added to rows already there)
// and the days it adds to. A batch id already applied makes it a no-op.
// Events of days whose raw events retention has already dropped are left
// out (the next Maintain would drop them, and their rollups are final).
func (s *Store) Write(ctx context.Context, b analytics.Batch) error {
	if err := b.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.write(ctx, b)
	if isNoPartition(err) {
		// A partition this replica knew was dropped by another's Maintain:
		// learn again which exist (and the new raw_cut), once.
		clear(s.parts)
		err = s.write(ctx, b)
	}
	if err != nil {
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			s.cache.reset()
		}
		return fmt.Errorf("analytics write %s: %w", b.ID, err)
	}
	return nil
}

// isNoPartition is an insert whose day has no partition (23514: "no
// partition of relation events found for row").
func isNoPartition(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23514" && strings.Contains(pe.Message, "no partition")
}

// rows are a batch's events in columns, for unnest.
type rows struct {
	minute, link, client, source, clicks []int32
	visitor                              []int64
}

func (s *Store) write(ctx context.Context, b analytics.Batch) error {
	var rawCut int64
	if err := s.pool.QueryRow(ctx, "SELECT value FROM meta WHERE key = 'raw_cut'").Scan(&rawCut); err != nil {
		return err
	}
	events := make([]*analytics.Event, 0, len(b.Events))
	for i := range b.Events {
		if b.Events[i].Minute()/1440 >= rawCut {
			events = append(events, &b.Events[i])
		}
	}
	if err := s.resolve(ctx, events); err != nil {
		return err
	}
	var r rows
	days := map[int32]bool{}
	for _, e := range events {
		m := e.Minute()
		days[int32(m/1440)] = true
		r.minute = append(r.minute, int32(m))
		r.link = append(r.link, s.cache.links[e.Link.UID].id)
		r.visitor = append(r.visitor, int64(e.Visitor))
		r.client = append(r.client, s.cache.clients[clientKey(s.cache, e)])
		r.source = append(r.source, s.cache.sources[sourceKey(s.cache, e)])
		r.clicks = append(r.clicks, int32(min(e.Clicks, 1<<31-1)))
	}
	dayList := make([]int32, 0, len(days))
	for d := range days {
		dayList = append(dayList, d)
	}
	slices.Sort(dayList)
	for _, d := range dayList {
		if err := s.ensurePartition(ctx, int64(d)); err != nil {
			return err
		}
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "INSERT INTO batches (id, at) VALUES ($1, $2) ON CONFLICT DO NOTHING", b.ID, time.Now().Unix())
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 || len(events) == 0 {
			return nil // applied before: the retry of a batch whose answer was lost
		}
		var q pgx.Batch
		// Identical keys in one batch (the same click under two spellings of
		// its link) are summed into one row; clicks is NULL for 1 (see
		// migration 3). Rows are appended: the same key in two batches is
		// two rows, which sum like one.
		q.Queue(`INSERT INTO events (visitor, minute, link, client, source, clicks)
SELECT visitor, minute, link, client, source, nullif(least(sum(clicks), 2147483647), 1)
FROM unnest($1::bigint[], $2::integer[], $3::integer[], $4::integer[], $5::integer[], $6::integer[])
	AS t(visitor, minute, link, client, source, clicks)
GROUP BY 1, 2, 3, 4, 5`,
			r.visitor, r.minute, r.link, r.client, r.source, r.clicks)
		// Last, so that the row lock on today's row, which every replica's
		// writes take, is held only for the commit.
		q.Queue(`INSERT INTO rolled_days (day) SELECT unnest($1::integer[]) ORDER BY 1
ON CONFLICT (day) DO UPDATE SET seq = rolled_days.seq + 1`, dayList)
		return tx.SendBatch(ctx, &q).Close()
	})
}

// comboKey is the ids of a clients row (device, os, browser, country,
// city) or of a sources row (referrer, utm_source, utm_medium,
// utm_campaign and a 0).
type comboKey [5]int32

func clientKey(c *dictCache, e *analytics.Event) comboKey {
	return comboKey{int32(e.Device), c.strs[e.OS], c.strs[e.Browser], c.strs[e.Country], c.strs[e.City]}
}

func sourceKey(c *dictCache, e *analytics.Event) comboKey {
	return comboKey{c.strs[e.Referrer], c.strs[e.UTMSource], c.strs[e.UTMMedium], c.strs[e.UTMCampaign]}
}

// resolve puts every string, link and combination the events name in the
// cache, inserting the new ones: a statement per dictionary for what the
// cache misses, rows in sorted order so that two replicas inserting the
// same new values wait for each other instead of deadlocking.
func (s *Store) resolve(ctx context.Context, events []*analytics.Event) error {
	c := s.cache
	if len(c.links) >= maxCached || len(c.strs) >= maxCached || len(c.clients) >= maxCached || len(c.sources) >= maxCached {
		c.reset()
	}
	strs := map[string]bool{}
	for _, e := range events {
		for _, v := range [...]string{e.Link.Namespace, e.OS, e.Browser, e.Country, e.City, e.Referrer, e.UTMSource, e.UTMMedium, e.UTMCampaign} {
			if _, ok := c.strs[v]; !ok {
				strs[v] = true
			}
		}
	}
	if err := s.resolveStrs(ctx, strs); err != nil {
		return err
	}
	links := map[string]analytics.LinkRef{}
	clients, sources := map[comboKey]bool{}, map[comboKey]bool{}
	for _, e := range events {
		if l, ok := c.links[e.Link.UID]; !ok || l.ref != e.Link {
			links[e.Link.UID] = e.Link
		}
		if k := clientKey(c, e); c.clients[k] == 0 {
			clients[k] = true
		}
		if k := sourceKey(c, e); c.sources[k] == 0 {
			sources[k] = true
		}
	}
	if err := s.resolveLinks(ctx, links); err != nil {
		return err
	}
	if err := s.resolveCombos(ctx, "clients", "device, os, browser, country, city", "smallint", clients, c.clients); err != nil {
		return err
	}
	return s.resolveCombos(ctx, "sources", "referrer, utm_source, utm_medium, utm_campaign", "integer", sources, c.sources)
}

func (s *Store) resolveStrs(ctx context.Context, want map[string]bool) error {
	if len(want) == 0 {
		return nil
	}
	list := make([]string, 0, len(want))
	for v := range want {
		list = append(list, v)
	}
	slices.Sort(list)
	if _, err := s.pool.Exec(ctx, "INSERT INTO strs (s) SELECT unnest($1::text[]) ORDER BY 1 ON CONFLICT DO NOTHING", list); err != nil {
		return err
	}
	rows, err := s.pool.Query(ctx, "SELECT id, s FROM strs WHERE s = ANY($1)", list)
	if err != nil {
		return err
	}
	var id int32
	var v string
	_, err = pgx.ForEachRow(rows, []any{&id, &v}, func() error {
		s.cache.strs[v] = id
		return nil
	})
	return err
}

func (s *Store) resolveLinks(ctx context.Context, want map[string]analytics.LinkRef) error {
	if len(want) == 0 {
		return nil
	}
	var uid, name, domain, key []string
	var ns []int32
	for _, l := range want {
		uid = append(uid, l.UID)
		ns = append(ns, s.cache.strs[l.Namespace])
		name, domain, key = append(name, l.Name), append(domain, l.Domain), append(key, l.Key)
	}
	// The name, domain and key are updated when they changed (a later
	// event names the Link as it is now); the namespace never changes.
	if _, err := s.pool.Exec(ctx, `INSERT INTO links (uid, namespace, name, domain, key)
SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::text[]) ORDER BY 1
ON CONFLICT (uid) DO UPDATE SET name = excluded.name, domain = excluded.domain, key = excluded.key
WHERE (links.name, links.domain, links.key) IS DISTINCT FROM (excluded.name, excluded.domain, excluded.key)`,
		uid, ns, name, domain, key); err != nil {
		return err
	}
	rows, err := s.pool.Query(ctx, "SELECT id, uid FROM links WHERE uid = ANY($1)", uid)
	if err != nil {
		return err
	}
	var id int32
	var u string
	_, err = pgx.ForEachRow(rows, []any{&id, &u}, func() error {
		s.cache.links[u] = linkEntry{id: id, ref: want[u]}
		return nil
	})
	if err != nil {
		return err
	}
	for u := range want {
		if _, ok := s.cache.links[u]; !ok {
			return fmt.Errorf("link %s vanished while it was written (removed by Maintain on another replica)", u)
		}
	}
	return nil
}

// resolveCombos inserts and reads the combinations of table (clients or
// sources) the cache lacks. cols names the table's id columns (five for
// clients, four for sources, whose keys end in a 0); the first has type
// firstType, the others integer.
func (s *Store) resolveCombos(ctx context.Context, table, cols, firstType string, want map[comboKey]bool, cache map[comboKey]int32) error {
	if len(want) == 0 {
		return nil
	}
	names := strings.Split(cols, ", ")
	n := len(names)
	keys := make([]comboKey, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b comboKey) int {
		for i := range a {
			if a[i] != b[i] {
				return int(a[i]) - int(b[i])
			}
		}
		return 0
	})
	cs := make([][]int32, n)
	args := make([]any, n)
	params, order := make([]string, n), make([]string, n)
	for i := range n {
		for _, k := range keys {
			cs[i] = append(cs[i], k[i])
		}
		args[i] = cs[i]
		params[i] = fmt.Sprintf("$%d::integer[]", i+1)
		order[i] = fmt.Sprint(i + 1)
	}
	in := "unnest(" + strings.Join(params, ", ") + ") AS t(" + cols + ")"
	if _, err := s.pool.Exec(ctx, "INSERT INTO "+table+" ("+cols+") SELECT "+names[0]+"::"+firstType+", "+strings.Join(names[1:], ", ")+
		" FROM "+in+" ORDER BY "+strings.Join(order, ", ")+" ON CONFLICT DO NOTHING", args...); err != nil {
		return err
	}
	rows, err := s.pool.Query(ctx, "SELECT x.id, x."+strings.Join(names, ", x.")+" FROM "+table+" x JOIN "+in+" USING ("+cols+")", args...)
	if err != nil {
		return err
	}
	var id int32
	var k comboKey
	dest := []any{&id}
	for i := range n {
		dest = append(dest, &k[i])
	}
	_, err = pgx.ForEachRow(rows, dest, func() error {
		cache[k] = id
		return nil
	})
	return err
}
