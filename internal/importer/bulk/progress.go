package bulk

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress shows how far the import is: a bar redrawn in place on a
// terminal, a plain line every interval elsewhere.
type progress struct {
	w        io.Writer
	terminal bool
	interval time.Duration
	total    int
	start    time.Time
	pace     func() (limit int, available float64, inflight int)

	mu                       sync.Mutex
	created, present, failed int
	note                     string        // why it waits, when it does
	latency                  time.Duration // of the last answered request
	stop                     chan struct{}
	stopped                  sync.WaitGroup
}

func newProgress(w io.Writer, terminal bool, interval time.Duration, total int, pace func() (int, float64, int)) *progress {
	p := &progress{w: w, terminal: terminal, interval: interval, total: total, start: time.Now(), pace: pace, stop: make(chan struct{})}
	every := interval
	if terminal {
		every = 250 * time.Millisecond // the ETA counts down while waiting
	}
	p.stopped.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.draw()
				p.mu.Unlock()
			}
		}
	})
	return p
}

// add counts the outcomes of a batch.
func (p *progress) add(o []outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, x := range o {
		switch x {
		case created:
			p.created++
		case present:
			p.present++
		case failed:
			p.failed++
		}
	}
	p.note = ""
	if p.terminal {
		p.draw()
	}
}

// waiting notes why nothing moves (a 429, a retry).
func (p *progress) waiting(note string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.note = note
	if !p.terminal {
		fmt.Fprintf(p.w, "kurz import: %s\n", note)
	}
}

// finish draws the last state and ends the line.
func (p *progress) finish() {
	close(p.stop)
	p.stopped.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw()
	if p.terminal {
		fmt.Fprintln(p.w)
	}
}

// draw writes the current state; the caller holds mu.
func (p *progress) draw() {
	done := p.created + p.present + p.failed
	pct := 100
	if p.total > 0 {
		pct = done * 100 / p.total
	}
	counts := fmt.Sprintf("%d/%d links (%d%%), created %d, already present %d, failed %d", done, p.total, pct, p.created, p.present, p.failed)
	eta := ""
	if d, ok := p.eta(done); ok && done < p.total {
		eta = ", ETA " + d.Round(time.Second).String()
	}
	if !p.terminal {
		fmt.Fprintf(p.w, "kurz import: %s%s\n", counts, eta)
		return
	}
	const width = 30
	filled := width * pct / 100
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	note := ""
	if p.note != "" {
		note = " (" + p.note + ")"
	}
	// \r and erase-line: one line, redrawn.
	fmt.Fprintf(p.w, "\r\x1b[K[%s] %s%s%s", bar, counts, eta, note)
}

// answered notes how long a request took to be answered, for the ETA.
func (p *progress) answered(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = d
}

// eta is the time the rest will take: the larger of the pace so far and
// the rate limit's pace. At the limit, what is in flight is already paid
// for: the items not yet sent wait for what the bucket does not hold, then
// the last of them takes a request's time to be answered. ok is false
// before anything tells (no answer, no limit).
func (p *progress) eta(done int) (time.Duration, bool) {
	rest := p.total - done
	var observed time.Duration
	if done > 0 {
		observed = time.Duration(float64(time.Since(p.start)) / float64(done) * float64(rest))
	}
	limit, available, inflight := p.pace()
	if limit == 0 {
		return observed, done > 0
	}
	unsent := float64(max(0, rest-inflight))
	atLimit := time.Duration(max(0, unsent-available)/(float64(limit)/60)*float64(time.Second)) + p.latency
	return max(observed, atLimit), true
}
