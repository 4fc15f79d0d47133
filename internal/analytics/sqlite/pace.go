package sqlite

import "time"

// paceRows is how many rows Write inserts between pauses: about 0.1 to
// 0.2 ms of CPU (an insert is 10 to 20 µs in this pure-Go SQLite).
const paceRows = 8

// maxPause bounds one pause: a chunk that took long because other work had
// the processor (its time is wall time) does not make the writer wait as
// long again. 20 000 rows (capture's largest batch) pause 2.5 s at most,
// well within the write timeout (10 s).
const maxPause = time.Millisecond

// pacer spaces a batch's inserts. The driver is Go (modernc.org/sqlite),
// so a minute's batch is CPU on the processors that serve redirects: 10 000
// rows are 0.1 to 0.4 s of it. Run straight, the writer kept its processor
// for whole scheduler time slices (10 ms), and on one core the redirect
// p99 rose from 3 ms to 20 ms in the rounds with the minute's write.
// runtime.Gosched does not help: a yielding goroutine goes to the global
// run queue, which the scheduler takes before it polls the network, so the
// writer runs again before the redirects' connections are woken. A pause
// (the writer blocked in a timer) lets the processor poll the network and
// serve; pausing as long as the chunk took keeps the writer to about half
// of a contended processor, and a redirect waits behind one chunk at most.
// On an idle processor nobody waits, and the pauses only stretch the
// batch's wall time (the runtime sleeps at least about a millisecond when
// it has nothing else to do: 10 000 rows take about 1.3 s more).
type pacer struct {
	start time.Time
	n     int
	// time.Now and time.Sleep; tests set the clock and record the pauses
	now   func() time.Time
	sleep func(time.Duration)
}

func newPacer() pacer { return pacer{start: time.Now(), now: time.Now, sleep: time.Sleep} }

// row counts a row, and pauses after every paceRows for as long as they
// took, at most maxPause.
func (p *pacer) row() {
	p.n++
	if p.n%paceRows != 0 {
		return
	}
	p.sleep(min(p.now().Sub(p.start), maxPause))
	p.start = p.now()
}
