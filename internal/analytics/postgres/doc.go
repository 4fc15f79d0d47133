// Package postgres is the analytics store for installs with several
// replicas (--analytics-store postgres://...): every redirect replica
// writes its batches to one PostgreSQL database and every API replica
// answers from it. It keeps the SQLite store's model (the same
// dictionaries, raw rows at minute resolution with counts, rollups of
// closed UTC days and months) and answers every query the same way:
// routing and the shaping of answers are package sqlplan's, and the same
// property test (storetest) holds both stores to one brute force.
//
// # Connections and timeouts
//
// A pgxpool of at most Options.MaxConns (4) connections per replica:
// the writer uses one at a time, queries and Maintain the rest, so
// replicas × MaxConns bounds what kurz asks of max_connections. Nothing
// waits beyond its ctx: acquiring a connection, connecting
// (Options.ConnectTimeout, 5 s, also for a server that accepts and never
// answers) and every statement end with it, pgx cancelling the statement
// on the server. The sessions carry statement_timeout
// (Options.StatementTimeout, 30 s; Maintain's statements
// Options.MaintainTimeout) so that the server ends a runaway query even
// when the client is gone, and idle_in_transaction_session_timeout (60 s)
// so that a replica that died in a transaction releases its locks. A
// database that is down makes Write fail at once (connection refused) or
// within its ctx; the writer above drops and counts, and the pool
// reconnects when the database is back (TestDatabaseDownAndBack). The URL
// holds a password: messages carry it through Redacted only.
//
// # Schema
//
// events is partitioned by range of its minute column (unix minutes),
// one partition per UTC day (events_d<unix day>, minutes d*1440 to
// (d+1)*1440). By day rather than month: retention drops exactly the days
// past Options.Retention (a monthly partition would keep up to a month
// more, or need row deletes), a day's rollup reads one partition, and one
// link's 30 days are 30 index seeks. Retention never deletes a raw row:
// it drops partitions (DROP TABLE, a moment's exclusive lock on events,
// waited for at most Options.LockTimeout, else retried by the next
// Maintain).
//
// A raw row is 48 bytes (schema version 3; 56 plus a 40-byte key entry
// before): the columns are ordered so that the 24 bytes of data need no
// padding, and clicks is NULL for a single click, which costs nothing
// (the null bitmap fits in the header's padding), so every sum reads
// coalesce(clicks, 1). There is no primary key: a retried batch is a
// no-op by its id, and two rows of the same key from two batches sum as
// one would. The only index is (link) on each partition; btree keeps a
// link's duplicates once with a list of row pointers (a few bytes a row),
// and the minute range is checked on the rows it finds.
//
// Packed form (schema version 5): a row costs 52 bytes on disk whatever
// it holds, so Maintain moves each closed, rolled-up day's rows into
// events_packed (pack.go), one row per link and day with the columns as
// arrays (about 18 bytes an event), partitioned by day like events and
// dropped with it. Writes only append to events; every reader reads both
// forms through rawEvents (a late event of a packed day is a row in
// events until the day is rolled up and packed again). The breakdown
// rollups are packed the same way: link_values a row per link and day,
// ws_values a row per namespace, dimension and day, link_months a row
// per link and month, each replaced whole when recomputed.
//
// Partitions are created ahead by Maintain (today and tomorrow) and by
// Write for a day that has none (a late or early event), under an
// advisory transaction lock so two replicas never race to create one,
// with the same LockTimeout. An event for a day whose partition
// retention dropped (meta.raw_cut) is left out: its rollups are final,
// and its raw events are gone anyway.
//
// # Writes
//
// One Write is: the dictionary rows the replica's caches miss (strings,
// links, client and source combinations), each one statement per batch
// through unnest, sorted so that two replicas inserting the same new
// values wait for each other rather than deadlock, and committed on
// their own (a dictionary row is a fact; a failed batch leaves harmless
// ones); then one transaction: the batch id (ON CONFLICT DO NOTHING: a
// retried batch is a no-op), the events through one INSERT ... SELECT
// FROM unnest(arrays), identical keys of the batch summed into one row
// (one round trip for the rows, binary arrays, no temporary table, so it
// also works behind PgBouncer in transaction mode), and the bump of
// rolled_days.seq for its days.
//
// # Rollups when several replicas write
//
// SQLite has one writer, so a late write and a rollup never interleave.
// Here a write of a closed day can commit while Maintain computes that
// day. Every Write bumps rolled_days.seq of its days in its own
// transaction (atomically with its events); Maintain reads seq, computes
// the day's rollups from raw events, and records the seq it read as
// rolled. Queries treat a day as rolled up only when rolled = seq: a
// write Maintain may have missed committed after the read, and bumped
// seq past it. Months likewise: rolled_months.sig is the sum of the
// month's days' seq when it was computed.
//
// # Maintain on several replicas
//
// Maintain takes a session advisory lock (pg_try_advisory_lock) for its
// whole run; a replica that finds it taken returns at once. The lock
// saves the work twice, not correctness: every rollup is an idempotent
// upsert (link_months: a delete and insert of a chunk of links, under an
// advisory transaction lock) recomputed from the raw events and marked
// with the seq read before it (TestMaintainConcurrently). Migrations take a session
// advisory lock too (pg_advisory_lock, waited for within ctx): replicas
// starting together migrate once (TestConcurrentOpenMigratesOnce).
//
// # Queries
//
// A query runs in one read-only REPEATABLE READ transaction: which days
// are rolled up and the rollups it reads are one snapshot.
//
// Top links over whole months read link_mtotals (per link and month),
// summed by Maintain in one REPEATABLE READ transaction per month and
// current while rolled_mtotals.sig is still the sum of the month's days'
// seq. One link's raw events are read through each partition's (link)
// index, one statement per contiguous range: joined with
// unnest(link, range) the planner hashes every row of the days'
// partitions when the link is hot. Those rows then meet clients and
// sources through the entries of their distinct ids, looked up once and
// hashed (linkInner), not one primary-key probe per row.
package postgres
