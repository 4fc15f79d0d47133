package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kurz-dev/kurz/internal/devenv"
)

// initialEventsEnd is what ends a watch-list's initial events: a BOOKMARK
// carrying this annotation (KEP-3157).
var initialEventsEnd = []byte(`"k8s.io/initial-events-end":"true"`)

// rawWatchList reads the watch-list stream of every Link a replica's start
// reads (sendInitialEvents, as client-go's reflector asks) and discards it,
// decoding nothing: how long kube-apiserver takes to send the Links with a
// consumer that costs nothing, the floor under any replica's start. It
// returns the time to the end-of-initial-events bookmark and the bytes read.
func rawWatchList(ctx context.Context, cfg *rest.Config) (time.Duration, int64, error) {
	tr, err := rest.TransportFor(cfg)
	if err != nil {
		return 0, 0, err
	}
	url := cfg.Host + "/apis/kurz.dev/v1alpha1/links?watch=true&sendInitialEvents=true" +
		"&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "identity") // kurz's informer asks for no gzip either
	start := time.Now()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return 0, 0, fmt.Errorf("watch-list: %s: %s", resp.Status, b)
	}
	// A read measures its protocol: HTTP/2 as client-go negotiates it, or
	// HTTP/1.1 when the config asks for nothing else.
	want := 2
	if slices.Equal(cfg.NextProtos, []string{"http/1.1"}) {
		want = 1
	}
	if resp.ProtoMajor != want {
		return 0, 0, fmt.Errorf("watch-list: answered over %s", resp.Proto)
	}
	buf := make([]byte, 1<<20)
	var n int64
	// carry holds the tail of the last read, so a marker split across two
	// reads is still found.
	var carry []byte
	for {
		k, err := resp.Body.Read(buf)
		n += int64(k)
		if k > 0 {
			chunk := append(carry, buf[:k]...)
			if bytes.Contains(chunk, initialEventsEnd) {
				return time.Since(start), n, nil
			}
			carry = append(carry[:0], chunk[max(0, len(chunk)-len(initialEventsEnd)):]...)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the stream ended before its initial events did")
			}
			return 0, n, err
		}
	}
}

// streamFloor reads every Link's watch-list and discards it, c.floorReads
// times one after the other, the floor under a replica's start (issue 31
// measures a start against it in the same run), and logs each read with
// the CPU kube-apiserver, etcd and bench-scale used for it; it returns
// their mean and the reads, 0 and none when every read failed.
func streamFloor(ctx context.Context, c config, env *devenv.Env) (time.Duration, []time.Duration, []cpuSpan) {
	var reads []time.Duration
	var spans []cpuSpan
	var sum time.Duration
	for i := range max(1, c.floorReads) {
		sctx, cancel := context.WithTimeout(ctx, c.serveTimeout)
		before := markSelf(env)
		cfg, proto := env.Config(), "h2"
		if c.floorProtocol == "http/1.1" || c.floorProtocol == "both" && i%2 == 1 {
			cfg.NextProtos, proto = []string{"http/1.1"}, "http/1.1"
		}
		d, n, err := rawWatchList(sctx, cfg)
		span := before.to(markSelf(env))
		cancel()
		if err != nil {
			logf("stream floor: %v (load %s)", err, uptime())
			continue
		}
		logf("stream floor: every Link's watch-list over %s, %d MiB, read and discarded in %s (load %s); %s", proto, n>>20, secs(d), uptime(), span.describe("bench-scale"))
		reads = append(reads, d)
		spans = append(spans, span)
		sum += d
	}
	if len(reads) == 0 {
		return 0, nil, nil
	}
	return sum / time.Duration(len(reads)), reads, spans
}

// ofFloor is the start against the stream floor measured before it, and
// against the decode floor when there is one.
func (f startFigures) ofFloor() string {
	if f.floor <= 0 {
		return ""
	}
	if f.decodeFloor > 0 {
		return fmt.Sprintf("%s; %.2f× the decode floor of %s (%.2f× the stream floor)", f.ofStreamFloor(),
			f.served.Seconds()/f.decodeFloor.Seconds(), secs(f.decodeFloor), f.decodeFloor.Seconds()/f.floor.Seconds())
	}
	return f.ofStreamFloor()
}

// ofStreamFloor is the start against the stream floor measured before it.
func (f startFigures) ofStreamFloor() string {
	if len(f.floorReads) > 1 {
		reads := make([]string, len(f.floorReads))
		for i, d := range f.floorReads {
			reads[i] = secs(d)
		}
		return fmt.Sprintf("; %.2f× the mean stream floor of %s measured just before (reads %s)",
			f.served.Seconds()/f.floor.Seconds(), secs(f.floor), strings.Join(reads, ", "))
	}
	return fmt.Sprintf("; %.2f× the stream floor of %s measured just before", f.served.Seconds()/f.floor.Seconds(), secs(f.floor))
}
