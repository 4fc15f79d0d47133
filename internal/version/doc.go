// Package version says which build of kurz is running: the release and commit
// stamped with -ldflags by the Makefile and the Dockerfile, else what the Go
// toolchain recorded in the binary (a `go install` or a plain `go build`).
package version
