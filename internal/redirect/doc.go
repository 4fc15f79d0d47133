// Package redirect serves https://<domain>/<key> from an in-memory index fed
// by the informer cache, and counts clicks.
//
// Every replica runs it (no leader election): the index decides on its own,
// with internal/claims, which Domain holds a hostname and which Link holds a
// key, so replicas agree without waiting for the controllers' conditions.
//
// The handler records a click in one place (handler.clicked): a Slot of
// package clicks, shared by every Entry of the Link's uid, counts it with
// an atomic add. What becomes of counted clicks is package clicks': its
// Writer stores them in Link status, exactly once. The server runs the
// Writer, and any other ClickConsumer, around serving: Replay before the
// first request, Run while serving, Finish after the drain. Dependencies
// run one way: clicks imports nothing of this package.
//
// Password cookies are HMAC-signed with a key derived from
// --redirect-cookie-secret (or --redirect-cookie-secret-file, e.g. a mounted
// Secret, or else the environment variable KURZ_REDIRECT_COOKIE_SECRET, which
// the deploy manifests fill from an optional Secret). Give every replica the
// same secret: without one, each process makes
// a random key, and a visitor whose next request lands on another replica (or
// comes after a restart) is asked for the password again. The cookie binds the
// link's uid and password hash, so changing the password logs everyone out.
//
// Password attempts are limited per visitor and link (a burst, then one per
// period; IPv6 visitors by their /64) and per link across all visitors. Behind
// an ingress the TCP peer is the ingress: list its networks in
// --redirect-trusted-proxies so the visitor is read from X-Forwarded-For, or
// every visitor shares the ingress's bucket. The bcrypt comparisons are
// bounded (--redirect-password-concurrency slots, 429 after a second's wait)
// and run in a worker process whose threads the kernel runs only on CPUs
// nothing else wants (bcryptproc), so password traffic cannot starve the
// redirects of other links: a comparison on a goroutine of this process
// would hold one of its GOMAXPROCS processors, whatever its thread's
// priority.
package redirect
