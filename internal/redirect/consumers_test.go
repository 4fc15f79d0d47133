package redirect

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	toolscache "k8s.io/client-go/tools/cache"
)

// recorder is a ClickConsumer that records what the server calls, and
// whether it was serving meanwhile.
type recorder struct {
	name      string
	srv       **Server
	replayErr error

	mu     *sync.Mutex
	events *[]string
}

func (r *recorder) record(event string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.events = append(*r.events, event+" "+r.name)
}

func (r *recorder) Replay(context.Context) error {
	if (*r.srv).Addr() != nil {
		r.record("replay while serving")
	}
	r.record("replay")
	return r.replayErr
}

func (r *recorder) Run(ctx context.Context) {
	r.record("run")
	<-ctx.Done()
	r.record("stop")
}

func (r *recorder) Finish(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		r.record("finish without a deadline")
	}
	r.record("finish")
	return nil
}

// TestClickConsumersLifecycle: the server replays its click consumers in
// order before it serves, runs them while it serves, and finishes them in
// order once they stopped running; a consumer that cannot replay stops the
// server before it serves, and those that replayed are finished.
func TestClickConsumersLifecycle(t *testing.T) {
	for _, tt := range []struct {
		name      string
		replayErr error
		want      []string
	}{
		{"served", nil, []string{"replay a", "replay b", "finish a", "finish b"}},
		{"b cannot replay", errors.New("spool unreadable"), []string{"replay a", "replay b", "finish a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var mu sync.Mutex
			var events []string
			var srv *Server
			a := &recorder{name: "a", srv: &srv, mu: &mu, events: &events}
			b := &recorder{name: "b", srv: &srv, mu: &mu, events: &events, replayErr: tt.replayErr}
			o := DefaultOptions()
			o.BindAddress = "127.0.0.1:0"
			srv, err := NewServer(o, NewIndex(), a, b)
			g.Expect(err).NotTo(HaveOccurred())

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- srv.Start(ctx) }()
			if tt.replayErr != nil {
				g.Expect(<-done).To(MatchError(tt.replayErr))
				g.Expect(srv.Addr()).To(BeNil(), "never served")
			} else {
				g.Eventually(srv.Addr, 10*time.Second).ShouldNot(BeNil())
				g.Eventually(func() int { mu.Lock(); defer mu.Unlock(); return len(events) }, 10*time.Second).Should(Equal(4))
				cancel()
				g.Expect(<-done).To(Succeed())
			}

			mu.Lock()
			defer mu.Unlock()
			var ordered, running []string
			for _, e := range events {
				switch e[:4] {
				case "run ", "stop":
					running = append(running, e)
				default:
					ordered = append(ordered, e)
				}
			}
			g.Expect(ordered).To(Equal(tt.want))
			if tt.replayErr == nil {
				g.Expect(running).To(ConsistOf("run a", "run b", "stop a", "stop b"))
				g.Expect(events[len(events)-2:]).To(Equal([]string{"finish a", "finish b"}), "after both stopped")
			} else {
				g.Expect(running).To(BeEmpty())
			}
		})
	}
}

// heldReplay is a ClickConsumer whose Replay waits until released.
type heldReplay struct{ release chan struct{} }

func (h heldReplay) Replay(ctx context.Context) error {
	select {
	case <-h.release:
	case <-ctx.Done():
	}
	return nil
}
func (heldReplay) Run(context.Context)          {}
func (heldReplay) Finish(context.Context) error { return nil }

// TestReadyOnlyOnceListening: an index synced before the server listens
// (the feed's bookmark comes before the caches' sync, the replay after it)
// is not yet ready: /readyz would send clicks to a closed port.
func TestReadyOnlyOnceListening(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	o.BindAddress = "127.0.0.1:0"
	held := heldReplay{release: make(chan struct{})}
	srv, err := NewServer(o, NewIndex(), held)
	g.Expect(err).NotTo(HaveOccurred())
	var synced atomic.Bool
	srv.synced = []toolscache.InformerSynced{synced.Load}
	g.Expect(srv.Ready()).To(MatchError(ContainSubstring("not synced")))

	synced.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	g.Consistently(srv.Ready, 200*time.Millisecond).Should(MatchError(ContainSubstring("not listening")))
	close(held.release)
	g.Eventually(srv.Ready, 10*time.Second).Should(Succeed())
	cancel()
	g.Expect(<-done).To(Succeed())
}
