// Package dns proves that a Domain belongs to whoever created it: either a
// TXT record _kurz-challenge.<domain> holds the Domain's verification token,
// or the domain resolves (CNAME, A or AAAA) to one of kurz's redirect targets.
//
// Lookups go through one configurable server (host:port), or the system
// resolver when none is set. The Go resolver does not cache, so a record that
// is published or removed shows on the next check.
package dns
