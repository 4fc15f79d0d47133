// Command kurz is the kurz link shortener: `kurz manager` runs the controllers,
// API server and redirect server against a cluster; `kurz dev` starts a local
// control plane and runs them all on a laptop.
package main
