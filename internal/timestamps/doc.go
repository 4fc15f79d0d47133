// Package timestamps keeps the microsecond created/updated times of Links and
// Domains. metadata.creationTimestamp has one-second resolution and there is
// no metadata time for spec changes, so kurz records both in status.
//
// Both writers follow the same rule: the API server stamps the objects it
// writes (so its answer carries the final times) and the controllers stamp
// changes made with kubectl. Each writes with an optimistic lock, so when both
// race for one change the loser sees the stamp on retry and leaves it be.
//
// A Link the API creates is the exception, for the cost of bulk creates and
// imports: the API puts its creation time in an annotation of the object it
// creates (Announce) instead of writing status a second time, and the Link
// controller's first status write, which it sends anyway (Ready, the short
// URL), carries it into status. Two writes a Link, not three. Until then
// every reader takes the times from the annotation (LinkCreated,
// LinkUpdated), so the API's answers are the same before and after.
package timestamps
