// Package linkquery answers the API's filtered and sorted link lists (GET
// /api/v1/links with search, domain, tag, state, dates, password or sort)
// and the workspace's tags with their link counts (GET /api/v1/tags) from
// memory, never from a list of kube-apiserver per request.
//
// The Index keeps one compact record per Link, 96 bytes: the informer's
// pointer, the key and URL sharing the Link's strings, the times and
// counts sorts compare, the first 8 bytes of the key and of the uid, small
// ids of the domain and of the tag set, the state and a password flag. The
// records of a namespace are one array, found by a map from uid hashes
// (slots.go); tag sets are shared, links with the same tags pointing to
// one. The Link informer's events feed the index beside the list index
// (pagination.Register feeds both from one handler, so a writer waiting
// for the list index finds its write here too). Each tag set also lists
// the slots of its records (members.go). About 128 bytes of heap a link in
// all (BenchmarkLoad).
//
// A tag filter that at most one record in 8 can pass reads only the
// members of the tag sets that pass it (tagged.go): tag=x of 1 000 links
// among 100 000 reads 1 000 records. Any other query is one sequential
// scan of the namespace's records, which turns
// the matches into (sort value, id prefix, slot) triples. A page within
// 256 items of the start is chosen during the scan: each triple is
// compared with the k-th best kept so far and most are dropped there,
// the rest cut back by a quickselect now and then (topk.go), so no buffer
// of 100 000 triples is filled, sorted or allocated. A page near the end
// is chosen the same way in the reverse order (the last page of 100 000
// is the first of the reversed list). Records mostly in the page's
// reverse order (links appended as they are created, asked newest first)
// are scanned backwards, so that the best come first. A page in between takes a buffer of
// every match (a second scan when filters left the end unknown) and a
// quickselect that puts the page's items, and only those, in order. Strings are read only by search
// (the URL's bytes and those of a key longer than its prefix: one cache
// miss each, not two in a row through the Link) and for the rare ties the
// prefixes cannot break; chasing 100 000 pointers costs more than the
// whole scan of the records.
//
// Orders are total: ties are broken by id (uid) in the sort's direction,
// so the order of created_at (newest first, then id descending) is the
// list index's own, and pages never repeat or skip an item while nothing
// changes.
package linkquery
