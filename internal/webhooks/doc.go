// Package webhooks delivers the events Webhook resources subscribe to:
// signed with the Standard Webhooks scheme, at least once, one queue per
// Webhook, through a dialer that refuses internal addresses at connect
// time. docs/webhooks.md is the user's side; this comment records the
// package's decisions.
//
// # Who sends what
//
// A Dispatcher runs on every replica (no leader election). Change events
// (link.created/updated/deleted/expired/conflict, domain.*) come from the
// leader's controllers, which hand a Change to Emit after the status patch
// that records the transition; Emit never blocks (a full inbox drops and
// counts). link.clicked batches come from each replica's own clicks
// (Clicked, which never waits for a receiver either): up to the Webhook's
// spec.maxClicksPerRequest (100 by default) and 96 KiB of JSON, or one
// second, per request and Webhook (clicks.go says why larger batches cost
// less). Clicked writes each click straight into its batches' buffers on
// the capture consumer's goroutine, the one that read it from the
// redirect's ring slot: no inbox and no goroutine between them (clicks.go
// says why); a goroutine of the dispatcher only sends the batches that
// waited a second. They cost nothing until a Webhook of the cluster
// subscribes to link.clicked (demand.go): without analytics the
// redirect's capture runs only while one does (OnClickDemand,
// internal/analytics/wiring's OnDemand). Ids are deterministic for change events (EventID:
// type, uid and what tells the change apart), so a new leader that sends a
// change again sends the same webhook-id; a batch's id is unique to the
// process, Webhook and batch, and the same for its retries.
//
// # Delivery
//
// Each Webhook has a sender on each replica: a FIFO queue bounded in bytes
// (--webhook-queue-bytes), one worker and its own HTTP client, so a receiver
// that hangs delays no other Webhook, and nothing that enqueues ever
// waits. An event is attempted up to spec.maxAttempts times, with
// exponential backoff and full jitter (1 s doubling to 5 min, a
// Retry-After up to that cap), then dropped and counted. 2xx is success;
// 410 Gone is final (the Webhook turns Stalled, ReceiverGone); a refused
// address is final (Stalled, URLRefused); everything else is retried.
// Events queued in memory are lost with the process (docs/webhooks.md says
// what a leader change loses, measured by TestLeaderChange).
//
// # Safety
//
// The dialer's Control checks every address it is about to connect to,
// after resolution: loopback (unless --webhook-allow-loopback), link-local
// and the metadata address, private and CGNAT ranges (unless the URL names
// a Service of the Webhook's own namespace and
// --webhook-allow-cluster-services), and the reserved ranges are refused,
// so DNS rebinding gains nothing. No proxy from the environment, no
// redirects followed, TLS verified (plus --webhook-ca-file), answers read
// up to 4 KiB. lastError never holds the URL (it may carry a token), a
// header, a body or the secret: only an HTTP status or an error's class.
//
// # Status
//
// The dispatcher writes a Webhook's delivery figures (lastDeliveryTime,
// lastSuccessTime, consecutiveFailures, lastError) at most every 30 s per
// Webhook and replica, only when they changed, and not over a later
// delivery another replica wrote. The Webhook controller (leader) owns the
// conditions and reads the figures; per-delivery figures are metrics.
package webhooks
