// Package restapi serves /api/v1 (links, their QR codes, domains) as
// operations on Link and Domain resources. It runs as a manager runnable on
// every replica; reads come from the informer cache, writes go to
// kube-apiserver. docs/api.md states the contract it implements and the
// decisions kurz takes where the contract is silent; this comment records
// the API server's own, and how it keeps them.
//
// # Routes
//
// The routes table is in routes.go; GET /api/v1/openapi.json serves an
// OpenAPI 3.0 document of all of it (openapi.json, kept true by tests that
// validate every real answer against it with kin-openapi). The document
// needs no token. Each route runs behind: panic recovery, metrics (by route
// pattern and status), a 64 KiB body limit (2 MiB on the bulk routes),
// authentication and authorization, and a per-ServiceAccount rate limit.
//
// # Authentication and authorization
//
//   - "Authorization: Bearer <token>" with a ServiceAccount token minted for
//     one of --api-token-audiences (kurz): `kubectl create token SA
//     --audience kurz`. The TokenReview asks for those audiences and its
//     answer must name one of them, so a pod's default token (audience
//     kube-apiserver) is not an API token, and an API token given to kurz
//     is not a kube-apiserver credential. Only ServiceAccounts have a
//     workspace (the ServiceAccount's namespace), so any other user, like a
//     missing, malformed, expired or unknown token, is 401
//     {"message":"Unauthenticated."}. Only JWT-shaped tokens are reviewed.
//   - A SubjectAccessReview checks the route's verb (list, get, create,
//     update, delete; the QR code needs get) on links.kurz.dev or
//     domains.kurz.dev in that namespace: 403 {"message":"This action is
//     unauthorized."} when RBAC says no. Bind kurz-viewer or kurz-editor.
//   - Both answers are cached for --api-auth-cache-ttl (10s) keyed by the
//     sha256 of the token (bounded LRU), so revoking access takes effect
//     within that time. Refused tokens are cached apart (1 000 entries,
//     5s), so a flood of bad tokens cannot push out good callers.
//     Concurrent requests with one uncached token share one TokenReview
//     (singleflight). Failed reviews (apiserver unreachable) are not
//     cached and answer 503. Tokens are never logged or kept. Each review
//     asked is counted in kurz_api_auth_reviews_total (metrics.go): a
//     busy client waits on one per TTL, the same request for both.
//   - A token that is not cached as good may cost a TokenReview, so it is
//     first counted against --api-unauthenticated-rate-limit (120 a
//     minute) per client address: the TCP peer, or behind
//     --api-trusted-proxies the X-Forwarded-For address the redirect
//     server would take (IPv6 clients are their /64). Past it, 429 with
//     Retry-After, without a review. Known good tokens are not counted.
//   - GET /api/v1/me needs a valid token and no verb: it answers the
//     caller's workspace and, for links and domains, each verb's answer of
//     the same cached SubjectAccessReviews the routes ask (me.go), so a
//     client (the console) hides what would be refused. Advice only.
//   - Ids of another workspace answer 404 like unknown ids.
//
// # Requests
//
//   - Bodies are JSON objects. Malformed JSON, or JSON that is not an object,
//     is 400; an empty body counts as {} (the required fields then say what
//     is missing). Unknown fields are ignored.
//   - As in a Laravel app (TrimStrings, ConvertEmptyStringsToNull), strings
//     are trimmed (passwords excepted) and "" counts as null: on a required
//     field that is "is required", on an optional one it clears it.
//   - A value of the wrong JSON type is a 422 on its field ("The key field
//     must be a string."). external_id accepts a JSON integer or a string of
//     digits. expires_at accepts RFC 3339 or "2006-01-02[ 15:04[:05]]" (UTC)
//     and is stored to the second (metav1.Time).
//   - Every field is validated, then the cluster checks run (domain held by
//     the workspace, key free), all before the first write: a refused
//     request writes nothing.
//
// # Links
//
//   - Create and update accept every link field of the contract. Update
//     replaces key, domain and url; an optional field that is present is set
//     (null or "" clears it), one that is absent is kept.
//   - domain is normalized (trimmed, lowercased, trailing dot dropped, IDN to
//     punycode) and must be held by a Domain of the caller's workspace (TXT
//     proof first, then the oldest uncontested claim, see internal/claims), else 422
//     "The selected domain is invalid.". A key already used on that domain
//     in the workspace is 422 "The key has already been taken.". On one
//     replica such writes are serialized per name; across replicas the
//     controllers' rule (oldest wins, the other reports KeyConflict) decides.
//   - password: stored only as a bcrypt hash (spec.passwordHash, cost 10); at
//     most 72 bytes. The contract types the response field as integer or
//     null: it is 1 when the link is protected and null otherwise, never the
//     hash.
//   - tags are a set: repeats are dropped (first kept), at most 32 of 1-64
//     characters. An empty list reads back as [].
//   - clicks is 0 on a fresh link (also in the create answer); last_click is
//     unix seconds or null; expires_at, created_at and updated_at print as
//     2006-01-02T15:04:05.000000Z.
//   - Objects are named <sanitized key>-<random> (GenerateName).
//
// # Domains
//
//   - The hostname is normalized as for links, then validated. A hostname
//     another live Domain of the caller's workspace has is 422 "The domain
//     has already been taken." (the Domain itself excepted on update).
//     Another workspace's hostname is accepted: the Domain is created (or
//     renamed) pending, its claim contested (internal/claims), and the same
//     status write sets the TXT record whose publication moves the hostname
//     to it, so a squatter's early claim cannot lock the DNS owner out.
//   - A Domain is named after its hostname when that name is free in the
//     namespace, else <hostname>-<random>.
//   - Beyond the contract's fields, a link answers state and state_reason
//     (link_state.go: its Ready reason in the state filter's words, pending
//     before the controller judged it) and a domain status_reason,
//     dns_record, last_checked_at and https (domain_state.go), read from
//     status: what the console shows a person without kubectl.
//   - status is "active" when the controller found the current spec
//     proven and owning its hostname (phase Active, Ready for this
//     generation), else "pending". Deleting a Domain leaves its links (they stop serving).
//
// # Timestamps and read-your-writes
//
// After each update, and each Domain create, the server stamps
// status.createdAt/updatedAt (internal/timestamps) with an optimistic-lock
// status patch, re-reading from kube-apiserver on conflict, so the answer
// carries the final times. A Link create writes no such patch: its time
// travels in the create (the kurz.dev/created-at annotation,
// timestamps.Announce), the answers read it from there, and the Link
// controller's first status write records it; bulk creates and imports
// cost two writes a Link, not three.
// Every PUT refreshes updated_at, even one that changes nothing, because the
// contract answers an update "with updated_at refreshed"; kubectl edits
// refresh it when the spec changes (a new generation). Then
// the server waits (at most 10s) until the list index, and so the cache,
// holds the written resourceVersion (or no longer holds a deleted object),
// so the caller's next read sees its write, and then (Options.Served) until
// the redirect index of the same process does, so a click sent as the
// answer arrives follows the write. Stamping or waiting failures are
// logged, not returned: the write itself succeeded.
//
// # Errors
//
// Bodies are {"message": ...} plus, for 422, "errors": {field: [messages]}.
// The 422 message is the first error, then " (and N more error(s))" as
// Laravel writes it. Statuses: 400 malformed JSON, 401, 403, 404 (unknown
// id or route), 405 (with Allow), 409 (a write kept conflicting), 413 (body
// over 64 KiB), 422, 429 (Retry-After), 500 (logged, no detail shown), 503
// (kube-apiserver unreachable or timing out, Retry-After: 1). Kubernetes
// errors are mapped in one place, writeError; Invalid errors from
// kube-apiserver (which should not happen after our own validation) become
// 422s with spec paths translated to API fields.
//
// # Limits
//
// --api-rate-limit (600) requests a minute per caller: the ServiceAccount
// (its uid), so every token minted for it shares one bucket. Each item of
// a bulk request counts as a request (chargeItems takes the rest once the
// body is read; a bulk larger than the whole bucket is a 422). A token
// bucket of that size refilled continuously, so bursts are allowed.
// Answers carry X-RateLimit-Limit and X-RateLimit-Remaining; a 429 adds
// Retry-After. Buckets are kept for up to 10 000 callers (LRU); the limit
// on unknown tokens per address (see above) works the same way.
//
// # Pagination
//
// Plain lists are cut from internal/pagination indexes fed by the Link and
// Domain informers (never sorted per request): newest first, 25 a page,
// Laravel's envelope with absolute URLs built from the request's scheme and
// Host, or from --api-public-url behind a proxy. Filtered and sorted lists
// are selected per request from memory (see "Finding and organising"). After a write, the handler waits
// (at most Options.WriteWait, 10 s) until that index holds
// it (internal/visibility), so the writer's next list shows its write.
//
// # Finding and organising (docs/api.md, "Finding and organising")
//
//   - GET /api/v1/links with filters, search or sort is cut from
//     internal/linkquery's records, fed by the same informer handler as the
//     list index (pagination.Register), list index last: a write awaited in
//     the list index is in the records too. The plain list keeps the list
//     index's O(log n) pages. Parameters are read like a body's fields
//     (list_params.go): a bad value is a 422 naming it, unknown ones are
//     ignored, and every page URL carries the ones given.
//   - GET /api/v1/domains filters and sorts the workspace's Domains per
//     request (they are few); GET /api/v1/tags reads linkquery's per
//     workspace tag counts.
//   - GET /api/v1/links/lookup finds the holder of a domain and key through
//     the cache's domain+key buckets and claims.KeyWinner, the answer the
//     redirect index gives.
//   - Bulk create, update and delete (bulk*.go) answer each item as the
//     single-link endpoint would, write 16 at a time, hold the claim locks
//     of every item (stripedMutex.lockAll, stripes in order), and wait for
//     the lists as single writes do. With atomic=true everything is checked
//     before the first write, and a write that fails undoes the others
//     (creates deleted, changes restored under the resourceVersion written)
//     on a context that outlives the client, for at most a minute.
//
// # One way per kind
//
// Links and Domains are found, listed, updated and deleted by the same
// code (resource.go): an update is retried on conflict against the live
// object (client-go's retry.RetryOnConflict), and a failed write is a 404
// only when a live read finds the object gone or replaced.
//
// # QR codes
//
// PUT /api/v1/links/{id}/qr-code reads download, color, background, size,
// level, margin and format from the query or a JSON body (internal/qr); an
// invalid value is a 422 on that parameter. The image encodes the short
// link, is cached in an LRU, and is sent with Cache-Control: private and,
// with download=true, Content-Disposition: attachment; filename="<key>.png"
// (or .svg).
package restapi
