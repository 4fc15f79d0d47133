// Package clientip tells which client a request comes from, for rate limits
// that must hold per visitor: the TCP peer, or behind trusted proxies (an
// ingress, a load balancer) the right-most X-Forwarded-For address that no
// trusted proxy added. The redirect server (password attempts) and the API
// server (requests with unknown tokens) key their limits on it.
package clientip
