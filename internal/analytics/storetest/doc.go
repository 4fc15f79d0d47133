// Package storetest is the behaviour every analytics.Store shows, as one
// suite that each store's tests run against a real instance (Run): the
// property test that compares every answer with a brute force over the
// events written (any group_by, filters, link sets, zones with daylight
// saving and half-hour offsets, ranges, each from raw events, from
// rollups and as routed), retried and bad batches, retention and deleted
// links, late events of rolled-up days, monthly rollups, a restart, and
// a cancelled context. A store's own tests add what only it has (its
// tables, its migrations, its failure modes).
//
// It also holds what those tests and the benchmarks share: Day0, Load
// (written through an Aggregator as a writer would) and Brute.
package storetest
