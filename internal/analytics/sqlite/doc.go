// Package sqlite is the embedded analytics store (modernc.org/sqlite, pure
// Go: `make run` still needs only Go), for deployments where one process
// runs every role: `kurz dev` and a single-replica install.
//
// # Connections
//
// One writer connection (Write, Forget, Maintain; SQLite has one writer at
// a time anyway) and a pool of Options.ReadConns read-only connections;
// WAL lets readers run beside the writer. synchronous=NORMAL: a power cut
// may lose the last transactions, never the file. Transactions start
// IMMEDIATE (the lock at BEGIN, not mid-way). A statement waits at most
// Options.BusyTimeout for another process's lock, and the driver's busy
// handler ends the wait when ctx ends, so a locked or slow database
// returns an error instead of blocking the writer goroutine (which then
// drops and counts). Migrations are versioned by PRAGMA user_version, run
// at Open one transaction each; a database newer than the code is refused.
//
// A batch is one transaction with prepared statements; its events go in
// 16 to an INSERT. The driver is Go, so writing is CPU on the processors
// that serve redirects: Write pauses after every 8 rows for as long as they
// took, at most 1 ms (Options.PaceWrites, pacer), so that redirects are
// served between chunks instead of waiting for the writer's 10 ms time
// slices (BenchmarkWriteBesideRequests).
//
// # Schema
//
// Dictionaries: links (uid → id, with namespace, name, domain, key and
// deleted_at), strs (every OS, browser, country, city, referrer, UTM
// value and namespace once; id 0 is ""), clients (device, os, browser,
// country, city; the city since schema version 4) and sources (referrer,
// utm_source, utm_medium, utm_campaign): one row per combination seen. The lead's design had one dims table of all eight;
// measured with the benchmark's data (bench-analytics -shapes) that is 3.2
// million combinations for 10 million clicks (a referrer long tail times
// countries times User-Agents), more than 10 bytes per click for the
// dictionary alone; split in two, 656 clients and 479 000 sources.
//
// events (day, link, minute, visitor, client, source, clicks), WITHOUT
// ROWID, keyed by all but clicks in that order: raw clicks at minute
// resolution, identical ones (same link, minute, visitor, client, source)
// one row with a count, kept Options.Retention (90 days). Clustered by UTC
// day first: a batch's inserts land in today's pages only (clustered by
// link first, a 5 000-row batch touched about 5 000 leaf pages and the WAL
// took 4 KB per row), retention deletes a key prefix, a day's rollup reads
// one contiguous range, and one link's range is one seek per day.
//
// Why raw rows at minute resolution with counts rather than the issue's
// hourly rollups per link and dimension: with 10 million clicks over 90
// days in 10 000 links there are 0.46 clicks per link-hour. Measured with
// the benchmark's data (bench-analytics -shapes), 10 million clicks are
// 9 999 999 raw rows after aggregation; (link, hour, all dimensions) would
// be 9.8 million rows, (link, day, all dimensions) 9.0 million and (link,
// day, one dimension, value) 19.7 million: every per-link rollup is
// as large as the raw rows or larger, and answers less. The raw rows are
// the fine-grained store within retention; rollups pay only where they
// compress.
//
// Rollups of closed UTC days (Maintain; each kept
// Options.RollupRetention, 2 years):
//
//   - link_days (link, day): clicks and distinct visitors, bots apart.
//     Time series at day and month granularity and "top links" over any
//     range: at most one row per link and day (881 000 for the benchmark).
//   - ws_values (namespace, dimension, day, value, bot): a workspace's
//     breakdowns, and its time series (a visitor has one device, so the
//     device rows of a day sum to its distinct visitors). The lead's
//     ws_days (namespace, day, all dimensions) would hold 6.1 million rows
//     for the benchmark, 61 % of the raw rows; one dimension at a time,
//     317 000.
//   - link_values (link, dimension, day, value, bot), only for link-days
//     of at least Options.DetailThreshold (200) clicks: a hot link's
//     top-10 over 30 days reads a few thousand rows instead of its 100 000
//     raw ones; a cold link's raw rows are fewer than its rollup would be.
//   - link_months (link, month, client, source): any filter and grouping
//     at month granularity beyond the raw retention. Computed when a month
//     closes, while all its raw events are there.
//
// rolled_days and rolled_months record what is rolled up; meta holds the
// raw retention's horizon; batches the applied batch ids
// (Options.BatchMemory, 3 days).
//
// # Where an answer comes from
//
// The routing below and the shaping of answers are package sqlplan's,
// shared with the PostgreSQL store, so both answer and refuse alike.
//
// Within the raw retention, a breakdown (by a dimension or by link, in any
// zone: it sums its range) or a time series whose buckets are UTC days or
// months, without dimension filters, for the workspace, one link or
// grouped by link, is answered from the daily rollups for rolled-up days
// and from raw events for the rest (today, a day a late event re-opened,
// partial UTC days at the range's edges): exactly what the raw events
// answer (the property test compares every group_by both ways with a
// brute force, breakdowns in every zone). Everything else within the
// retention (hour buckets, a time series in a zone not at UTC, filters, a
// set of several links) reads raw events: exact, any zone.
//
// Beyond the raw retention: hours are refused (a *analytics.QueryError
// naming granularity); a time series in a zone a whole number of hours
// from UTC is answered in UTC days (Result.Location says so), one in a
// zone that is not (India, +05:30) is refused naming timezone; filters, link sets and one link's breakdowns
// come from link_months, by whole UTC months (Result.Start moves back to
// the month's start; a day granularity is refused).
//
// # Visitors from rollups
//
// Exact wherever the rollups hold the group: a link's day (link_days), a
// workspace's day and value (ws_values), a hot link's day and value
// (link_values). Summed, so counted once per row, where they do not:
// several links beyond the raw retention (a visitor of two links counts
// twice), and link_months grouped by one dimension (a visitor seen with
// two referrers or campaigns on one day counts once per combination).
//
// # Retention, deletion, late events
//
// Maintain (run it hourly from one process) rolls up every closed UTC day
// (15 minutes after midnight, for the writers' last flushes) not rolled up
// yet, then months, then deletes raw events older than Options.Retention
// (never of a day not rolled up) a day per transaction, rollups older than
// Options.RollupRetention a few links per transaction, and batch ids. A
// Link deleted (Forget) keeps its analytics for Options.DeleteGrace (7 days)
// and then loses all of them; a namespace left without links loses its
// workspace rollups too. An event that arrives for a rolled-up day (a
// retried batch after midnight) re-opens that day: queries read its raw
// events until the next Maintain rolls it up again; one that arrives for a
// day beyond the raw retention is deleted by the next Maintain.
//
// # Figures
//
// make bench-analytics (hack/bench-analytics: 10 million clicks over 90
// days in 10 000 links of one workspace, the hottest link 3.7 % of them),
// on this 2-core machine while other work kept its load average at 15 to
// 25, so wall-clock times are several times the CPU times:
//
//   - ingest: 9.9 million rows in 22m51s wall, 3m06s CPU including the
//     generator; BenchmarkWrite: 30 µs per row wall in 5 000-row batches
//     (about 33 000 rows/s on one writer). Maintain over the 90 days:
//     7m32s CPU (about 5 s of CPU per day of 110 000 clicks, which is its
//     steady-state work per day).
//   - on disk after Maintain: 451.6 MB, 45.7 bytes per click (events
//     307.5 MB, link_months 89.3 MB, sources 17.3, link_days 16.4,
//     link_values 12.1, ws_values 7.2).
//   - one link's 30-day time series: p50 1.7 ms, p99 21 ms wall (5 ms CPU);
//     its top-10 by country, device, browser, os, referrer, utm_source:
//     p99 9 to 61 ms wall, 9 to 27 ms CPU; the hottest link's top-10 in
//     a zone off UTC: 250 ms CPU from its 123 000 raw rows before
//     breakdowns were answered from rollups in every zone, p99 6.0 ms
//     wall on the idle machine since.
//   - the workspace's top links over 90 days: p50 391 ms, p99 534 ms CPU
//     (about 1 s wall at this load), reading 871 000 link_days rows
//     (180 to 270 ms of it) and today's raw rows; since link_mtotals (whole
//     months from per-link month totals, docs/analytics-stores.md) p50
//     203 ms, p99 260 ms CPU on the same data; workspace breakdowns over
//     30 and 90 days: 6 to 23 ms CPU, referrer (a long tail of hosts)
//     60 ms and 193 ms.
//   - a filtered workspace breakdown from raw events (7 days, one
//     campaign): 1.1 s CPU.
package sqlite
