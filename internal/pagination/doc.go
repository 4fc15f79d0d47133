// Package pagination builds the list envelope of the /api/v1 API (Laravel's
// length-aware paginator, see docs/api.md "Lists and pagination") and keeps the
// ordered per-namespace index the list pages are cut from.
//
// Pages are never made by sorting all objects per request: Index keeps every
// namespace's objects in an order-statistic B+tree fed by informer events, so
// a page costs O(log n + limit) whatever the page number.
package pagination
