// Package linkquery answers the API's filtered and sorted link lists (GET
// /api/v1/links with search, domain, tag, state, dates, password or sort)
// and the workspace's tags with their link counts (GET /api/v1/tags) from
// memory, never from a list of kube-apiserver per request.
//
// The Index keeps one compact record per Link (64 bytes: the informer's
// pointer, the times and counts sorts compare, the first 8 bytes of the key
// and of the uid, small ids of the domain and of the tag set, the state and
// a password flag), in one array per namespace, fed by the Link informer's
// events beside the list index (pagination.Register feeds both from one
// handler, so a writer waiting for the list index finds its write here
// too). Tag sets are shared: links with the same tags point to one set.
//
// A query is one sequential scan of the namespace's records, which keeps
// the matches as (sort value, id prefix, slot) triples, then a quickselect
// that puts the page's items, and only those, in order: O(n) whatever the
// page. A Link's strings are read only by search (its URL, and a key
// longer than the prefix) and for the rare ties the prefixes cannot break; chasing 100 000 pointers costs more than the
// whole scan of the records.
//
// Orders are total: ties are broken by id (uid) in the sort's direction,
// so the order of created_at (newest first, then id descending) is the
// list index's own, and pages never repeat or skip an item while nothing
// changes.
package linkquery
