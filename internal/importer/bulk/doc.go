// Package bulk creates imported links through kurz's bulk API, POST
// /api/v1/links/bulk (the contract: docs/import.md and the design note of
// issue 26), in batches of up to 100, paced to the caller's rate limit, with
// progress on stderr.
//
// Decisions:
//
//   - Resumable without a lookup per link: the bulk answer of a key already
//     taken in the workspace (422, errors.key "The key has already been
//     taken." and nothing else) counts as "already present", not as a
//     failure. A re-run, or a run after an interrupted one, creates nothing
//     twice and reports what was there. kurz import does not compare or
//     overwrite a present link.
//   - Pacing: rate limits count items, so the client keeps an estimate of
//     the caller's bucket from X-RateLimit-Limit (per minute) and
//     X-RateLimit-Remaining, refilled at limit/60 a second, and sends a
//     batch only when the bucket holds it. Until the first answer tells the
//     limit, one request is in flight. A 429 stops every worker until its
//     Retry-After (seconds or an HTTP date) has passed, and the batch is
//     sent again. A batch is never larger than the limit (a bucket of 60
//     could never pay for 100 items).
//   - Failures of a whole request: 413 splits the batch in two (and later
//     batches shrink); 5xx and network errors are retried with backoff
//     (Retry-After when given), then the import stops; 401, 403 and other
//     4xx stop it at once with the API's message. A request whose answer
//     was lost may have created its links: the retry then reports them as
//     already present.
//   - Progress: on a terminal, one line redrawn in place with a bar and an
//     ETA; otherwise a plain line every ProgressInterval. The ETA is the
//     larger of the observed pace and the rate limit's pace: the links not
//     yet sent (those in flight are paid for) less what the bucket holds,
//     at limit/60 a second, plus the last request's answer time. So at the
//     limit it is the limit's (make bench-import prints every ETA against
//     the time the import really took).
//   - The token is read from a file (never a flag: flags show in ps and
//     shell history) and never printed.
package bulk
