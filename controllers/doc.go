// Package controllers holds the Link and Domain reconcilers, and those that
// route verified Domains through the cluster's own components.
//
// The Domain controller proves domains through DNS and settles which
// namespace holds a hostname; the Link controller decides whether each link
// serves (Ready) and why not. Both write status only, once per pass and only
// when it changed, and never react to status writes (click flushes), so a
// settled cluster costs no writes at all. "Changed" is judged against the
// object as the cache holds it, so they read it with read-your-writes
// consistency (setup.go): a cache that has not yet seen their own last
// write would otherwise make a needed write look like no change.
//
// With --ingress-class, --gateway-class or --gateway, RouteReconciler keeps
// one object per Domain that holds its hostname and is Active (an Ingress,
// or an HTTPRoute), with one lifecycle for both (internal/routing.Decide)
// and the TLSReady condition; with the Gateway API, GatewayReconciler
// gives each HTTPRoute an HTTPS listener in one of kurz's Gateways or
// ListenerSets (internal/routing.Assign: 64 listeners each, a hostname
// never moved once placed) and deletes those left empty.
package controllers
