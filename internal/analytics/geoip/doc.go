// Package geoip answers the country (and the city, when the file has
// cities) of a client address from a MaxMind-format database (.mmdb:
// GeoLite2/GeoIP2 Country or City, DB-IP, IPinfo's mmdb exports) that the
// operator mounts (--geoip-database). The analytics writer asks it off
// the redirect path; a trusted country header (--analytics-country-header)
// wins when a request carries one.
//
// # Reloading
//
// The file is reloaded when it changes, found by polling its stat (size,
// modification time and identity, following symlinks) every
// Options.ReloadInterval (1 minute) rather than by fsnotify: the usual
// ways such a file changes in Kubernetes defeat inotify on the file. A
// ConfigMap or Secret volume is updated by swapping a ..data symlink in
// the directory (the watched inode never changes), geoipupdate and a
// sidecar rename a new file over the old one (the watch is on the old
// inode and must be re-armed), and network volumes (NFS, CSI drivers)
// send no events at all. A stat a minute costs nothing, and a database
// updated weekly does not need a quicker pickup.
//
// A file that does not parse (a half-copied update, a wrong file) is not
// loaded: the previous one keeps answering, the error is reported, and
// the next change of the file is tried again. Open fails on such a file,
// so that a wrong --geoip-database stops the process at start.
//
// The database is read into memory (not mmap'd): a reload swaps one
// pointer while lookups run on the old copy, which the garbage collector
// frees when the last of them ends. Memory is the file's size (about 8 MB
// for a country database, 60 MB for a city one), twice that for a moment
// while reloading.
package geoip
