// Package claims decides who owns a contested name: which Domain holds a
// hostname claimed by several namespaces (see Owner and docs/security.md,
// "Hostname ownership"; whether a claim is contested: contest.go), and
// which Link holds a (domain, key) claimed by several Links (the oldest
// Link). The controllers, the API and the redirect index all ask here, so
// they can never disagree.
package claims
