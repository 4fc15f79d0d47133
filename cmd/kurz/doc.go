// Command kurz is the kurz link shortener: `kurz manager` runs the controllers,
// API server and redirect server against a cluster; `kurz dev` starts a local
// control plane and runs them all on a laptop; `kurz import` reads links from
// a CSV or another shortener's export into manifests or through the API.
package main
