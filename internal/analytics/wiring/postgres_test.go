package wiring

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

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
		g.Expect(s.c.Finish(context.Background())).To(Succeed())
	}

	reader := newStack(t, testOptions(url))
	got, err := clicksByLink(context.Background(), reader.k.store, "team")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(map[string]int64{"uid-a": perWriter, "uid-b": perWriter}), "2 writers x %d clicks, half on each link", perWriter)
}
