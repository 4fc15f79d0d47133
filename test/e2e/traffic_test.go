package e2e

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// clickTraffic is a few visitors clicking short links on one redirect
// server: keep-alive clients, each checking every answer. A click counts
// as sent when its 302 with the right Location came back: the replica
// counted it then.
type clickTraffic struct {
	stopCh chan struct{}
	wg     sync.WaitGroup
	client *http.Client

	mu       sync.Mutex
	answered []time.Time // when each good click came back
	failed   int
	failures []string // the first few, for the failure message
	started  time.Time
	stopped  time.Time
}

const (
	// trafficClients per replica and the pause of each between requests
	// keep the load modest (about 150 clicks/s per replica) on 2 shared cores.
	trafficClients = 4
	trafficPause   = 25 * time.Millisecond
	// trafficTimeout is generous: redirects come from memory and should
	// answer in microseconds, so only a stuck server hits it.
	trafficTimeout = 5 * time.Second
	// trafficMaxDuration bounds a traffic run the test forgets to stop.
	trafficMaxDuration = 3 * time.Minute
	maxFailuresKept    = 10
)

// startClicks clicks host/key for each of keys, round robin, on the
// redirect server at addr until stop. Each key redirects to
// https://example.com/<key>.
func startClicks(addr, host string, keys []string) *clickTraffic {
	return startClicksVia(func() (string, error) { return addr, nil }, host, keys)
}

// startClicksVia is startClicks with the server picked for every request
// (through endpoints, for a rollout); a pick that fails is a failed click.
func startClicksVia(pick func() (string, error), host string, keys []string) *clickTraffic {
	c := &clickTraffic{
		stopCh: make(chan struct{}),
		client: &http.Client{
			Timeout:       trafficTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Transport:     &http.Transport{Proxy: nil, MaxIdleConnsPerHost: trafficClients, DisableCompression: true},
		},
		started: time.Now(),
	}
	deadline := c.started.Add(trafficMaxDuration)
	for i := range trafficClients {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			for n := i; time.Now().Before(deadline); n++ {
				select {
				case <-c.stopCh:
					return
				case <-time.After(trafficPause):
				}
				addr, err := pick()
				if err == nil {
					err = c.click(addr, host, keys[n%len(keys)])
				}
				c.record(err)
			}
		}()
	}
	return c
}

// click sends one redirect GET and says what was wrong with the answer.
func (c *clickTraffic) click(addr, host, key string) error {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/"+key, nil)
	if err != nil {
		return err
	}
	req.Host = host
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	want := "https://example.com/" + key
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
		return fmt.Errorf("%s/%s: %d to %q, want 302 to %q", host, key, resp.StatusCode, resp.Header.Get("Location"), want)
	}
	return nil
}

func (c *clickTraffic) record(err error) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.answered = append(c.answered, now)
		return
	}
	c.failed++
	if len(c.failures) < maxFailuresKept {
		c.failures = append(c.failures, now.Format("15:04:05.000")+" "+err.Error())
	}
}

// stop ends the run and waits for the requests in flight.
func (c *clickTraffic) stop() {
	select {
	case <-c.stopCh:
		return
	default:
	}
	close(c.stopCh)
	c.wg.Wait()
	c.client.CloseIdleConnections()
	c.mu.Lock()
	c.stopped = time.Now()
	c.mu.Unlock()
}

// sent is how many clicks came back as redirects.
func (c *clickTraffic) sent() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int64(len(c.answered))
}

// sentIn is how many clicks came back in the time window (from, to].
func (c *clickTraffic) sentIn(from, to time.Time) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, at := range c.answered {
		if at.After(from) && !at.After(to) {
			n++
		}
	}
	return n
}

// failedCount and failureSample say how many requests went wrong and how.
func (c *clickTraffic) failedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

func (c *clickTraffic) failureSample() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.failures...)
}

// rate is the clicks per second over the run so far (or until stop).
func (c *clickTraffic) rate() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	end := c.stopped
	if end.IsZero() {
		end = time.Now()
	}
	return float64(len(c.answered)) / end.Sub(c.started).Seconds()
}

func (c *clickTraffic) String() string {
	return fmt.Sprintf("%d clicks sent, %d failed (%.0f/s) %v", c.sent(), c.failedCount(), c.rate(), c.failureSample())
}
