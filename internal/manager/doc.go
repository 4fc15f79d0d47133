// Package manager assembles kurz's roles (controllers, API server, redirect
// server) into one controller-runtime manager. `kurz manager` runs it against a
// cluster; `kurz dev` runs it against the local control plane it starts.
//
// The process stays up when the control plane does not: with leader
// election, a runnable of every replica campaigns for the Lease and runs
// fresh controllers while it leads (leader.go), so losing the Lease stops
// the controllers and nothing else. /readyz passes once the caches have
// synced and fails from the start of a shutdown (readiness.go); Run serves
// on for the shutdown delay before it drains (shutdown.go).
package manager
