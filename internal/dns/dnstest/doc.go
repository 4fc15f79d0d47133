// Package dnstest runs an authoritative DNS server on loopback for tests,
// with records that can be changed while it runs. It answers UDP and TCP on
// the same port.
package dnstest
