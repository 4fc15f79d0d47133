package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are the schema's versions: migrations[i] takes a database from
// user_version i to i+1, in one transaction. Never edit a released one;
// append.
var migrations = []string{
	// 1: dictionaries and raw events.
	`
CREATE TABLE links (
	id         INTEGER PRIMARY KEY,
	uid        TEXT NOT NULL UNIQUE,
	namespace  INTEGER NOT NULL, -- strs.id
	name       TEXT NOT NULL,
	domain     TEXT NOT NULL,
	key        TEXT NOT NULL,
	deleted_at INTEGER           -- unix seconds; NULL while the Link exists
);
CREATE INDEX links_namespace ON links (namespace, id);

-- Every string a dimension or namespace takes, once. Id 0 is "".
CREATE TABLE strs (
	id INTEGER PRIMARY KEY,
	s  TEXT NOT NULL UNIQUE
);
INSERT INTO strs (id, s) VALUES (0, '');

-- Who clicked: one row per distinct combination seen.
CREATE TABLE clients (
	id      INTEGER PRIMARY KEY,
	device  INTEGER NOT NULL, -- analytics.Device
	os      INTEGER NOT NULL, -- strs.id
	browser INTEGER NOT NULL,
	country INTEGER NOT NULL,
	UNIQUE (device, os, browser, country)
);

-- Where from: one row per distinct combination seen.
CREATE TABLE sources (
	id           INTEGER PRIMARY KEY,
	referrer     INTEGER NOT NULL, -- strs.id
	utm_source   INTEGER NOT NULL,
	utm_medium   INTEGER NOT NULL,
	utm_campaign INTEGER NOT NULL,
	UNIQUE (referrer, utm_source, utm_medium, utm_campaign)
);

-- Raw events at minute resolution, identical ones counted in one row,
-- clustered by UTC day, then link and time: a batch's inserts touch only
-- today's pages, retention deletes a key prefix, and one link's range is
-- one seek per day.
CREATE TABLE events (
	day     INTEGER NOT NULL, -- unix days, UTC
	link    INTEGER NOT NULL,
	minute  INTEGER NOT NULL, -- minute of the day, 0 to 1439
	visitor INTEGER NOT NULL, -- the day's keyed hash; 0 unknown
	client  INTEGER NOT NULL,
	source  INTEGER NOT NULL,
	clicks  INTEGER NOT NULL,
	PRIMARY KEY (day, link, minute, visitor, client, source)
) WITHOUT ROWID;

-- Batch ids applied, so a retried batch is stored once.
CREATE TABLE batches (
	id TEXT PRIMARY KEY,
	at INTEGER NOT NULL -- unix seconds
) WITHOUT ROWID;
`,
	// 2: rollups of closed UTC days.
	`
-- Per link and UTC day: time series at day granularity and top links,
-- beyond the raw retention too. Visitors are the day's distinct hashes;
-- bots (Device bot) apart, so exclude_bots needs no raw events.
CREATE TABLE link_days (
	link         INTEGER NOT NULL,
	day          INTEGER NOT NULL, -- unix days
	clicks       INTEGER NOT NULL, -- without bots
	visitors     INTEGER NOT NULL,
	bot_clicks   INTEGER NOT NULL,
	bot_visitors INTEGER NOT NULL,
	detail       INTEGER NOT NULL, -- 1: this link-day has link_values rows
	PRIMARY KEY (link, day)
) WITHOUT ROWID;

-- Per link, dimension and UTC day, for link-days of at least
-- DetailThreshold clicks: a hot link's top-N without scanning its events.
CREATE TABLE link_values (
	link     INTEGER NOT NULL,
	dim      INTEGER NOT NULL, -- analytics.Dimension
	day      INTEGER NOT NULL,
	value    INTEGER NOT NULL, -- the device, or strs.id
	bot      INTEGER NOT NULL,
	clicks   INTEGER NOT NULL,
	visitors INTEGER NOT NULL,
	PRIMARY KEY (link, dim, day, value, bot)
) WITHOUT ROWID;

-- Per namespace, dimension and UTC day: workspace breakdowns.
CREATE TABLE ws_values (
	namespace INTEGER NOT NULL, -- strs.id
	dim       INTEGER NOT NULL,
	day       INTEGER NOT NULL,
	value     INTEGER NOT NULL,
	bot       INTEGER NOT NULL,
	clicks    INTEGER NOT NULL,
	visitors  INTEGER NOT NULL,
	PRIMARY KEY (namespace, dim, day, value, bot)
) WITHOUT ROWID;

-- Per link, UTC month and dimension combination: any filter and grouping
-- at month granularity beyond the raw retention. Visitors: the sum over
-- the month's days of each day's distinct hashes.
CREATE TABLE link_months (
	link     INTEGER NOT NULL,
	month    INTEGER NOT NULL, -- months since 1970-01
	client   INTEGER NOT NULL,
	source   INTEGER NOT NULL,
	clicks   INTEGER NOT NULL,
	visitors INTEGER NOT NULL,
	PRIMARY KEY (link, month, client, source)
) WITHOUT ROWID;

-- Days and months whose rollups are computed (and still right: a late
-- event of such a day removes its row).
CREATE TABLE rolled_days (day INTEGER PRIMARY KEY, done INTEGER NOT NULL);
CREATE TABLE rolled_months (month INTEGER PRIMARY KEY, done INTEGER NOT NULL);

-- raw_cut: the unix day before which retention has deleted raw events (a
-- month is rolled up only while all its raw events are there).
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO meta (key, value) VALUES ('raw_cut', 0);
`,
	// 3: per-link month totals, for top links over long ranges.
	`
-- Per link and UTC month: link_days summed over the month, so that top
-- links over 90 days read about two rows per link for the whole months
-- and link_days only for the partial ones (534 ms p99 reading link_days
-- alone at 10 000 links; see docs/analytics-stores.md).
CREATE TABLE link_mtotals (
	link         INTEGER NOT NULL,
	month        INTEGER NOT NULL, -- months since 1970-01
	clicks       INTEGER NOT NULL, -- without bots
	visitors     INTEGER NOT NULL, -- the sum of daily distinct hashes
	bot_clicks   INTEGER NOT NULL,
	bot_visitors INTEGER NOT NULL,
	PRIMARY KEY (link, month)
) WITHOUT ROWID;

-- Months whose link_mtotals are the sums of their link_days as they are:
-- a roll-up of one of the month's days (again) or a late event removes
-- the row.
CREATE TABLE rolled_mtotals (month INTEGER PRIMARY KEY);
`,
	// 4: the city, a client's dimension like the country.
	`
-- clients gains city (strs.id of analytics.Event.City, "DE/Berlin"; 0
-- unknown): SQLite cannot change a UNIQUE constraint in place, so the
-- table is copied, every client's city unknown, keeping the ids that
-- events and link_months refer to.
CREATE TABLE clients_v4 (
	id      INTEGER PRIMARY KEY,
	device  INTEGER NOT NULL, -- analytics.Device
	os      INTEGER NOT NULL, -- strs.id
	browser INTEGER NOT NULL,
	country INTEGER NOT NULL,
	city    INTEGER NOT NULL,
	UNIQUE (device, os, browser, country, city)
);
INSERT INTO clients_v4 (id, device, os, browser, country, city) SELECT id, device, os, browser, country, 0 FROM clients;
DROP TABLE clients;
ALTER TABLE clients_v4 RENAME TO clients;

-- Days rolled up before have no city rows (dim 9, analytics.DimCity):
-- their clicks' city is unknown (value 0). Every click has a device
-- (dim 1) and a visitor one device (the hash is of address and
-- User-Agent), so the device rows' sums are the day's totals.
INSERT OR IGNORE INTO link_values (link, dim, day, value, bot, clicks, visitors)
SELECT link, 9, day, 0, bot, sum(clicks), sum(visitors) FROM link_values WHERE dim = 1 GROUP BY link, day, bot;
INSERT OR IGNORE INTO ws_values (namespace, dim, day, value, bot, clicks, visitors)
SELECT namespace, 9, day, 0, bot, sum(clicks), sum(visitors) FROM ws_values WHERE dim = 1 GROUP BY namespace, day, bot;
`,
}

// migrate brings db to version target (len(migrations) in production),
// one transaction per step, and refuses a database newer than this code.
func migrate(ctx context.Context, db *sql.DB, target int) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var v int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("reading the schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("the database has schema version %d, newer than this kurz knows (%d): refusing to touch it", v, len(migrations))
	}
	for ; v < target; v++ {
		if err := step(ctx, conn, v); err != nil {
			return fmt.Errorf("migrating the schema to version %d: %w", v+1, err)
		}
	}
	return nil
}

func step(ctx context.Context, conn *sql.Conn, v int) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	// Re-read inside the transaction: another process may have migrated.
	var cur int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
		return err
	}
	if cur != v {
		return nil
	}
	if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
		return err
	}
	return tx.Commit()
}
