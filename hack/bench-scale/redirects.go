package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// measureRedirects fetches random keys over c.conns keep-alive connections
// for c.loadTime. The client shares the machine with the server, so this is
// a floor, not the server's ceiling (make bench-redirect pins both).
func measureRedirects(c config, m *managerProc, r *results) error {
	hc := &fasthttp.HostClient{Addr: m.redirect, MaxConns: c.conns}
	var mu sync.Mutex
	var all []time.Duration
	total, errs := 0, 0
	end := time.Now().Add(c.loadTime)
	var wg sync.WaitGroup
	for range c.conns {
		wg.Go(func() {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.Header.SetHost(host)
			var lat []time.Duration
			n, bad := 0, 0
			for time.Now().Before(end) {
				req.SetRequestURI(fmt.Sprintf("http://%s/%s", host, linkKey(rand.IntN(c.n))))
				start := time.Now()
				if err := hc.Do(req, resp); err != nil || resp.StatusCode() != fasthttp.StatusFound {
					bad++
				}
				lat = append(lat, time.Since(start))
				n++
			}
			mu.Lock()
			all = append(all, lat...)
			total, errs = total+n, errs+bad
			mu.Unlock()
		})
	}
	wg.Wait()
	if total == 0 {
		return fmt.Errorf("no redirect answered")
	}
	slices.Sort(all)
	r.redirectRPS = float64(total) / c.loadTime.Seconds()
	r.redirectP99 = pctl(all, 0.99)
	r.redirectErrors = errs
	return nil
}
