package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// startTrace fetches a runtime execution trace of the manager's next d
// into path in the background, and returns a function that waits for it.
// `go tool trace -pprof=sched path` shows where goroutines waited for a
// processor; the trace itself shows who held them meanwhile.
func startTrace(ctx context.Context, m *managerProc, d time.Duration, path string) func() error {
	done := make(chan error, 1)
	go func() {
		done <- saveURL(ctx, fmt.Sprintf("http://%s/debug/pprof/trace?seconds=%d", m.pprof, int(d.Seconds())), path)
	}()
	return func() error { return <-done }
}

// saveURL writes the body of a GET of url, which must answer 200, to path.
func saveURL(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
