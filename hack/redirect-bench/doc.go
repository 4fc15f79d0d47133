// Command redirect-bench serves the real redirect handler over an index
// filled directly with generated Links, without a cluster, for
// hack/bench-redirect.sh. Keys are k0 .. k<n-1> on one host, and with
// -password-links p0 .. p<m-1> protected by one cost-12 bcrypt hash. It
// prints the index's memory per link, then serves until SIGINT/SIGTERM.
//
// With -load it is the load generator instead: it starts itself as the
// server in a child process on loopback and measures one scenario (see
// load.go): "idle-conns" (RSS per idle keep-alive connection) or
// "password" (redirect latency while clients post wrong passwords). The
// password scenario's clients fetch redirects as fast as they can, or at
// -rate on a fixed schedule; -server-cpus pins the server (taskset, its
// GOMAXPROCS follows), -server-session puts it in a scheduler autogroup of
// its own, -server-bin serves another build, and the server reports, per
// phase, its garbage collections, how long the world stood stopped, and how
// long runnable goroutines waited for a processor (runtimestats.go).
package main
