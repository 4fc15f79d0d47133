package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/sqlplan"
)

// maxCached bounds each dictionary cache; past it the cache starts over
// (a miss costs one indexed lookup).
const maxCached = 200_000

type linkEntry struct {
	id  int64
	ref analytics.LinkRef
}

// dictCache maps what a batch names to the ids the database gave it. Only
// the writer uses it (under Store.mu); a failed transaction resets it,
// since it may hold ids the rollback took back.
type dictCache struct {
	links   map[string]linkEntry
	strs    map[string]int64
	clients map[[5]int64]int64
	sources map[[5]int64]int64 // the last id 0
}

func newDictCache() *dictCache {
	c := &dictCache{}
	c.reset()
	return c
}

func (c *dictCache) reset() {
	c.links = map[string]linkEntry{}
	c.strs = map[string]int64{"": 0}
	c.clients = map[[5]int64]int64{}
	c.sources = map[[5]int64]int64{}
}

// Write stores b in one transaction: the batch id, the links, strings and
// combinations it names, and its events (added to a row already there for
// the same link, minute, visitor and dimensions). A batch id already
// applied makes it a no-op. Days already rolled up that b adds to are
// marked for Maintain to roll up again.
func (s *Store) Write(ctx context.Context, b analytics.Batch) error {
	if err := b.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.write(ctx, b); err != nil {
		s.cache.reset()
		return fmt.Errorf("analytics write %s: %w", b.ID, err)
	}
	return nil
}

type writeTx struct {
	tx                                   *sql.Tx
	c                                    *dictCache
	link, strIns, strGet, client, source *sql.Stmt
}

func (s *Store) write(ctx context.Context, b analytics.Batch) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	res, err := tx.ExecContext(ctx, "INSERT INTO batches (id, at) VALUES (?, ?) ON CONFLICT DO NOTHING", b.ID, time.Now().Unix())
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // applied before: the retry of a batch whose answer was lost
	}
	w := &writeTx{tx: tx, c: s.cache}
	for _, p := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&w.link, `INSERT INTO links (uid, namespace, name, domain, key) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (uid) DO UPDATE SET name = excluded.name, domain = excluded.domain, key = excluded.key RETURNING id`},
		{&w.strIns, "INSERT INTO strs (s) VALUES (?) ON CONFLICT DO NOTHING"},
		{&w.strGet, "SELECT id FROM strs WHERE s = ?"},
		{&w.client, `INSERT INTO clients (device, os, browser, country, city) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT DO UPDATE SET device = excluded.device RETURNING id`},
		{&w.source, `INSERT INTO sources (referrer, utm_source, utm_medium, utm_campaign) VALUES (?, ?, ?, ?)
			ON CONFLICT DO UPDATE SET referrer = excluded.referrer RETURNING id`},
	} {
		if *p.st, err = tx.PrepareContext(ctx, p.sql); err != nil {
			return err
		}
	}
	evMany, err := tx.PrepareContext(ctx, eventsInsert(insertRows))
	if err != nil {
		return err
	}
	evOne, err := tx.PrepareContext(ctx, eventsInsert(1))
	if err != nil {
		return err
	}
	days := map[int64]struct{}{}
	pace := newPacer()
	args := make([]any, 0, 7*insertRows)
	for i := range b.Events {
		if s.opts.PaceWrites {
			pace.row()
		}
		e := &b.Events[i]
		link, err := w.linkID(ctx, e.Link)
		if err != nil {
			return err
		}
		client, err := w.clientID(ctx, e)
		if err != nil {
			return err
		}
		source, err := w.sourceID(ctx, e)
		if err != nil {
			return err
		}
		m := e.Minute()
		days[m/1440] = struct{}{}
		args = append(args, m/1440, link, m%1440, int64(e.Visitor), client, source, e.Clicks)
		if len(args) == cap(args) {
			if _, err := evMany.ExecContext(ctx, args...); err != nil {
				return err
			}
			args = args[:0]
		}
	}
	for ; len(args) > 0; args = args[7:] {
		if _, err := evOne.ExecContext(ctx, args[:7]...); err != nil {
			return err
		}
	}
	for d := range days {
		// A late event of a rolled-up day: roll it up again (Maintain).
		if _, err := tx.ExecContext(ctx, "DELETE FROM rolled_days WHERE day = ?", d); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM rolled_months WHERE month = ?", sqlplan.MonthOfDay(d)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM rolled_mtotals WHERE month = ?", sqlplan.MonthOfDay(d)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// insertRows is how many events one INSERT statement adds: one statement
// per row cost database/sql's and the driver's overhead (arguments,
// binding, a statement step and reset) once per row; BenchmarkWrite
// measures the difference. Two rows with the same key in one statement are
// summed by the upsert, as in two.
const insertRows = 16

// eventsInsert is the upsert of n events.
func eventsInsert(n int) string {
	return "INSERT INTO events (day, link, minute, visitor, client, source, clicks) VALUES " +
		strings.Repeat("(?, ?, ?, ?, ?, ?, ?), ", n-1) + "(?, ?, ?, ?, ?, ?, ?)" +
		" ON CONFLICT DO UPDATE SET clicks = clicks + excluded.clicks"
}

func (w *writeTx) linkID(ctx context.Context, l analytics.LinkRef) (int64, error) {
	if e, ok := w.c.links[l.UID]; ok && e.ref == l {
		return e.id, nil
	}
	ns, err := w.strID(ctx, l.Namespace)
	if err != nil {
		return 0, err
	}
	var id int64
	if err := w.link.QueryRowContext(ctx, l.UID, ns, l.Name, l.Domain, l.Key).Scan(&id); err != nil {
		return 0, err
	}
	if len(w.c.links) >= maxCached {
		clear(w.c.links)
	}
	w.c.links[l.UID] = linkEntry{id: id, ref: l}
	return id, nil
}

func (w *writeTx) strID(ctx context.Context, s string) (int64, error) {
	if id, ok := w.c.strs[s]; ok {
		return id, nil
	}
	if _, err := w.strIns.ExecContext(ctx, s); err != nil {
		return 0, err
	}
	var id int64
	if err := w.strGet.QueryRowContext(ctx, s).Scan(&id); err != nil {
		return 0, err
	}
	if len(w.c.strs) >= maxCached {
		clear(w.c.strs)
		w.c.strs[""] = 0
	}
	w.c.strs[s] = id
	return id, nil
}

func (w *writeTx) strIDs(ctx context.Context, ss ...string) ([5]int64, error) {
	var out [5]int64
	for i, s := range ss {
		id, err := w.strID(ctx, s)
		if err != nil {
			return out, err
		}
		out[i] = id
	}
	return out, nil
}

func (w *writeTx) clientID(ctx context.Context, e *analytics.Event) (int64, error) {
	k, err := w.strIDs(ctx, e.OS, e.Browser, e.Country, e.City)
	if err != nil {
		return 0, err
	}
	k = [5]int64{int64(e.Device), k[0], k[1], k[2], k[3]}
	return w.combo(ctx, w.c.clients, w.client, k[:])
}

func (w *writeTx) sourceID(ctx context.Context, e *analytics.Event) (int64, error) {
	k, err := w.strIDs(ctx, e.Referrer, e.UTMSource, e.UTMMedium, e.UTMCampaign)
	if err != nil {
		return 0, err
	}
	return w.combo(ctx, w.c.sources, w.source, k[:4])
}

// combo is the id of the clients or sources row of the ids k (five for a
// client, four for a source), inserted if new.
func (w *writeTx) combo(ctx context.Context, cache map[[5]int64]int64, st *sql.Stmt, k []int64) (int64, error) {
	var key [5]int64
	copy(key[:], k)
	if id, ok := cache[key]; ok {
		return id, nil
	}
	args := make([]any, len(k))
	for i, v := range k {
		args[i] = v
	}
	var id int64
	if err := st.QueryRowContext(ctx, args...).Scan(&id); err != nil {
		return 0, err
	}
	if len(cache) >= maxCached {
		clear(cache)
	}
	cache[key] = id
	return id, nil
}
