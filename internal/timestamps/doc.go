// Package timestamps keeps the microsecond created/updated times of Links and
// Domains. metadata.creationTimestamp has one-second resolution and there is
// no metadata time for spec changes, so kurz records both in status.
//
// Both writers follow the same rule: the API server stamps the objects it
// writes (so its answer carries the final times) and the controllers stamp
// changes made with kubectl. Each writes with an optimistic lock, so when both
// race for one change the loser sees the stamp on retry and leaves it be.
package timestamps
