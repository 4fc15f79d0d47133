// Package sqlplan is what the SQL analytics stores (sqlite, postgres)
// share of answering a query: where an answer comes from (Route: raw
// events or rollups, the range and zone it has), the SQL fragments both
// dialects accept over the same column names (a dimension's value, the
// group key, wall-clock buckets in a zone with daylight saving, the
// filters), and turning summed groups into an answer's rows (a time
// series with every bucket, or groups ranked by clicks). Both stores
// route through the same code, so they refuse and answer the same
// queries the same way; the property test in storetest holds each to
// the same brute force.
//
// The schema both stores keep for this: events e (day, link, minute,
// visitor, client, source, clicks) at minute resolution with day the unix
// day and minute the minute of that day; clients c (device, os, browser,
// country, city) and sources s (referrer, utm_source, utm_medium, utm_campaign)
// of dictionary ids; rollups keyed by link or namespace and UTC day or
// month. Only integers the store itself produced are written into SQL
// text (ids, minutes, offsets); every string a caller gives is a bind
// parameter.
package sqlplan
