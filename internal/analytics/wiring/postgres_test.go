package wiring

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// Two processes' analytics (replicas of kurz manager with the redirect
// role) write to one PostgreSQL database while a third (the API role,
// no capture) reads it: the counts add up, across writers and links.
func TestTwoWritersOneReaderAddUp(t *testing.T) {
	g := NewWithT(t)
	url := testenv.Postgres(t)
	links := []*testLink{
		{analytics.LinkRef{UID: "uid-a", Namespace: "team", Name: "a", Domain: "go.example", Key: "a"}},
		{analytics.LinkRef{UID: "uid-b", Namespace: "team", Name: "b", Domain: "go.example", Key: "b"}},
	}
	const perWriter = 300
	var writers []*stack
	for range 2 {
		writers = append(writers, newStack(t, testOptions(url)))
	}
	var wg sync.WaitGroup
	for w, s := range writers {
		s.run(t)
		wg.Go(func() {
			for i := range perWriter {
				ip := fmt.Sprintf("192.0.2.%d", 1+(i+w)%200)
				// The ring is full only while the consumer is behind (it
				// drains every 5ms); a redirect would drop the click, the
				// test retries to keep the expected count exact.
				for !s.click(links[i%2], ip, "", "https://news.example.org/x") {
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
	for _, s := range writers {
		g.Expect(s.finish()).To(Succeed())
	}

	reader := newStack(t, testOptions(url))
	got, err := clicksByLink(context.Background(), reader.k.store, "team")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(map[string]int64{"uid-a": perWriter, "uid-b": perWriter}), "2 writers x %d clicks, half on each link", perWriter)
}

// The PostgreSQL server stops mid-run and comes back: every click still
// goes into the ring at once (the redirect never waits), the batches the
// store could not take are dropped and counted, and analytics resume: the
// clicks stored and the clicks dropped add up to every click.
func TestPostgresRestartedMidRun(t *testing.T) {
	g := NewWithT(t)
	srv := testenv.NewPostgres(t)
	url := srv.CreateDatabase(t)
	o := testOptions(url)
	o.Capture.WriteAttempts = 1
	o.Capture.WriteTimeout = 2 * time.Second
	s := newStack(t, o)
	s.run(t)
	reader := newStack(t, testOptions(url))
	link := &testLink{analytics.LinkRef{UID: "uid-r", Namespace: "ops", Name: "r", Domain: "go.example", Key: "r"}}
	ctx := context.Background()
	dropped := func() float64 { return metricSum(g, "kurz_analytics_dropped_clicks_total", nil) }
	dropped0 := dropped()
	stored := func() int64 {
		got, err := clicksByLink(ctx, reader.k.store, "ops")
		if err != nil {
			return -1 // the reader's connections are reopened after the restart
		}
		return got["uid-r"]
	}
	sent := 0
	send := func(n int) {
		for range n {
			g.Expect(s.click(link, "192.0.2.9", "", "")).To(BeTrue(), "the ring is never full: the consumer does not wait for the store")
			sent++
		}
	}

	send(50)
	g.Eventually(stored).WithTimeout(10 * time.Second).Should(Equal(int64(50)))

	g.Expect(srv.Stop()).To(Succeed())
	// Clicks keep coming while the database is down, batch after batch.
	g.Eventually(func() float64 {
		send(10)
		return dropped() - dropped0
	}).WithTimeout(30*time.Second).WithPolling(50*time.Millisecond).Should(BeNumerically(">", 0), "batches the store could not take are counted")

	g.Expect(srv.Start()).To(Succeed())
	send(50)
	// Batches queued before the restart may still be written after it:
	// stored + dropped is exact once the queue is empty.
	g.Eventually(func() float64 {
		return float64(stored()) + dropped() - dropped0
	}).WithTimeout(30 * time.Second).Should(Equal(float64(sent)))
	g.Expect(stored()).To(BeNumerically(">=", 100), "the clicks before the stop and after the restart are stored")
}

// A PostgreSQL store that cannot be opened fails Setup with an error that
// names the store without its password (Setup's caller logs it).
func TestOpenStoreErrorHidesPassword(t *testing.T) {
	g := NewWithT(t)
	o := testOptions("postgres://kurz:s3cret-pw@127.0.0.1:1/analytics?sslmode=disable")
	o.Complete()
	g.Expect(o.Validate()).To(Succeed())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := openStore(ctx, o)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("127.0.0.1"))
	g.Expect(err.Error()).NotTo(ContainSubstring("s3cret-pw"))
}
