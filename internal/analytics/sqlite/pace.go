package sqlite

import "time"

// paceRows is how many rows Write inserts between pauses: about 0.1 to
// 0.2 ms of CPU (an insert is 10 to 20 µs in this pure-Go SQLite).
const paceRows = 8

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
	sleep func(time.Duration) // time.Sleep; tests record the pauses
}

func newPacer() pacer { return pacer{start: time.Now(), sleep: time.Sleep} }

// row counts a row, and pauses after every paceRows.
func (p *pacer) row() {
	p.n++
	if p.n%paceRows != 0 {
		return
	}
	p.sleep(time.Since(p.start))
	p.start = time.Now()
}
