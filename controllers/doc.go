// Package controllers holds the Link and Domain reconcilers.
//
// The Domain controller proves domains through DNS and settles which
// namespace holds a hostname; the Link controller decides whether each link
// serves (Ready) and why not. Both write status only, once per pass and only
// when it changed, and never react to status writes (click flushes), so a
// settled cluster costs no writes at all.
package controllers
