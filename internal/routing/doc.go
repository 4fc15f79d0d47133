// Package routing says what kurz asks of the cluster's own routing and
// certificate components for a Domain: the Ingress that sends its hostname
// to the redirect Service (with a tls entry cert-manager fills), or, with
// the Gateway API, the HTTPRoute doing the same and the HTTPS listener in
// one of kurz's Gateways or ListenerSets (Assign decides which one holds
// which hostname, 64 listeners each at most, a hostname never moved once
// placed); the names of these objects and of the hostname's Secret; when a
// Domain's route is created, kept or removed (Decide, the same for both
// ways); and where HTTPS stands given the Certificate and Secret found (the
// TLSReady condition). Everything here is pure: the controllers in
// controllers/ read and write the objects.
package routing
