// Package clicks counts the clicks of Links and stores them in their status,
// exactly once. The redirect server (internal/redirect) uses it one way:
// this package imports nothing of the server's.
//
// A click is counted by a Slot (32 bytes, one per Link in the redirect
// index, shared by every Entry of the Link's uid, whose uid it holds): its
// Counter, made at the Link's first click and identified by the Link (uid,
// namespace, name), adds it with an atomic add, allocating nothing, and
// queues itself on the Queue once per flush round. The Writer takes the
// queued Counters and writes one status patch per Link. Its lifecycle is
// the server's: Replay (the spool, once the index holds the Links, before
// serving), Run (a flush every --click-flush-interval while serving) and
// Finish (the final flush after the server drained, then the spool). Its
// options (the --click-* flags) and metrics are this package's.
//
// Counting for status is one use of a click. Click analytics
// (internal/analytics: per-click events, a bounded ring the redirect fills
// and a writer goroutine that drains it into a store) is another, with its
// own buffer and lifecycle: the redirect handler records both in its one
// clicked method, and the server runs analytics' writer beside this Writer
// as another of its click consumers (Replay, Run, Finish). The exact
// totals stay here; analytics never delays or changes them.
//
// Clicks are counted exactly once, also across kube-apiserver outages, as
// long as what waits fits the spool (below: else the fewest-clicked Links
// are dropped, and counted). A click patch can fail without saying whether the API server applied it (a
// timeout, a dropped connection), and a frozen server (SIGSTOP) may apply it
// long after the sender gave up, so "not applied yet" proves nothing. Every
// patch therefore carries two things: the resourceVersion it was computed
// from, as a precondition, and this process's marker {id, seq} in
// status.clickWriters (the id is the pod name plus a random suffix, new for
// every process). Before writing a Link again, the Writer settles its
// unanswered patch with a live read: the marker is there, so it was applied;
// the resourceVersion moved on without it, so it never will be (the clicks
// are written again); the resourceVersion is unchanged, so the very same
// patch is sent again: at most one copy can apply, because the first changes
// the resourceVersion the others require, and a Conflict means read again.
// A Conflict is no proof of "not applied" either, also for a patch sent the
// first time: client-go sends a patch again after a 429 or a 5xx with
// Retry-After, and the copy sent again conflicts with an applied first one;
// so after a Conflict the marker is looked for before anything is written
// again. An unanswered patch that kube-apiserver refuses (403, 422) every
// time it is sent again at its unchanged resourceVersion is given up after
// ten refusals, its clicks dropped and counted.
// Markers are pruned after a day (or past 16 writers); a writer that finds
// its marker may have been pruned writes its clicks again and logs that they
// may count twice. See settle in write.go.
//
// Counts that cannot be written wait in memory: one Counter per Link (whose
// Slot the index holds anyway) and at most one unanswered patch per Link. A
// request waits at most one flush interval (2 to 10 s; the final flush's at
// most 2 s, to leave time for the spool), and a flush that meets an
// unreachable API server stops there and keeps the rest. With
// --click-spool, what is pending (counts, lastClickTime, and the unanswered
// patches with their markers) is also on disk whenever it matters, written
// atomically (temporary file, fsync, rename, directory fsync): a flush round
// that leaves something unwritten (an outage) writes the spool, and while
// the spool exists every round writes ahead: it computes its patches, writes
// the spool with them as unanswered patches (marker and precondition) and
// the rest as counts, and only then sends them, so a SIGKILL after the API
// server applied one is settled by its marker on the next start instead of
// counted again. That is one atomic spool write per round, only while the
// spool exists; the first round that writes everything removes it, and
// normal operation writes nothing to disk. SIGTERM spools the final flush's
// leftovers; the next start replays the spool (settling its unanswered
// patches under the writer id that sent them). A spool that does not parse
// is moved to <file>.corrupt (or .corrupt.N: none is overwritten) and
// logged; one with invalid entries is copied there and its valid entries
// are replayed.
//
// The spool is bounded: its volume (an emptyDir) evicts the pod past its
// size limit, losing every pending click, so the file stays below half of
// --click-spool-size-limit (its atomic rewrite holds two copies for a
// moment), less the .corrupt copies. Past that, clicks are dropped, counted
// in kurz_redirect_clicks_dropped_total{reason="spool_full"} and logged (a
// line a minute at most): unsure writes are kept first (they may be applied
// already, only settling tells), then the Links with the most pending
// clicks (every entry costs about the same, so this keeps the most clicks);
// counts take at most three quarters, leaving room for the write-ahead
// patches that write them back. See spoolcap.go. So SIGKILL, also during an outage
// or a replay, loses at most what was counted since the last flush round
// (plus that round's duration), and counts nothing twice; a lost node loses
// the spool with its emptyDir. See flushDurable in writeahead.go.
package clicks
