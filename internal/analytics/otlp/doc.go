// Package otlp exports analytics to an OpenTelemetry pipeline: an
// analytics.Writer (--analytics-otlp-endpoint) that sends each batch as
// OpenTelemetry log records over OTLP/HTTP (protobuf, POST /v1/logs), so a
// collector can route clicks to ClickHouse, Loki or a warehouse, alongside
// a store or instead of one.
//
// # One record per aggregated row, not per click
//
// The writer goroutine aggregates identical clicks (same link, minute,
// visitor and dimensions) into one row with a count before any writer
// sees them (analytics.Aggregator): the per-click events no longer exist
// when Write is called, and re-expanding a row into n identical records
// would multiply the export's size and the collector's work by the very
// factor aggregation saved, while adding nothing a consumer could not get
// from the count. So each analytics.Event of a Batch becomes one log
// record whose kurz.clicks attribute is its count: sum kurz.clicks, not
// records, to count clicks. A record's time is the row's minute.
//
// # Records
//
// Event name kurz.link.click, body "click", attributes (empty ones left
// out): kurz.link.uid, kurz.link.namespace, kurz.link.name,
// kurz.link.domain, kurz.link.key, kurz.clicks (int), kurz.visitor (the
// day's keyed visitor hash as 16 hex digits: unique per day, unlinkable
// across days; no IP is exported), kurz.device, kurz.os, kurz.browser,
// kurz.country, kurz.city (the country and the GeoIP file's English
// name, "DE/Berlin", as the analytics API's city), kurz.referrer, kurz.utm_source, kurz.utm_medium,
// kurz.utm_campaign, and kurz.batch.id: a batch the writer retries
// carries the same id, so a consumer can drop the copy (OTLP itself
// delivers at least once). The resource has service.name kurz.
//
// # Bounds, timeouts, retries
//
// A batch is sent in requests of at most Options.MaxRecords records, one
// at a time over a bounded connection pool. Each attempt has
// Options.Timeout; 429, 502, 503 and 504 and transport errors are retried
// with exponential backoff from Options.Backoff, doubling up to 30 s and
// honouring a Retry-After in seconds (capped at 30 s), for at most
// Options.Attempts attempts and never past the Write's ctx. Other answers
// (400: a malformed request; 401/403: wrong headers) fail at once, as
// OTLP says they must not be retried, and so does a partial success (the
// receiver rejected some records: sending them again would not help). A
// failed Write returns an error and the writer above drops and counts the
// batch: the exporter never blocks the redirect path.
//
// Headers (for example an API key of a hosted backend) come from
// OTEL_EXPORTER_OTLP_HEADERS (key=value,... URL-encoded, as every
// OpenTelemetry SDK reads it), not from a flag: a flag's value is visible
// in the process list and the Pod spec, an environment variable can come
// from a Secret.
package otlp
