// Package routing says what kurz asks of the cluster's own routing and
// certificate components for a Domain: the Ingress that sends its hostname
// to the redirect Service (with a tls entry cert-manager fills), the names
// of that Ingress and of the hostname's Secret, and where HTTPS stands given
// the Certificate and Secret found (the TLSReady condition). Everything here
// is pure: the Ingress controller in controllers/ reads and writes the
// objects.
package routing
