package bcryptproc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
)

// ErrTooLong is a hash or password longer than a request carries.
var ErrTooLong = errors.New("bcryptproc: hash or password too long")

// Checker compares passwords with bcrypt hashes in a worker process, started
// at the first comparison and again at the first after it ended.
type Checker struct {
	concurrency int
	exe         string // the worker's executable; the running one by default

	mu     sync.Mutex
	w      *worker
	closed bool
}

// New returns a Checker whose worker runs up to concurrency comparisons at
// once (its GOMAXPROCS); the caller sends no more than that at a time. exe
// is the worker's executable, "" for the running one (any binary that links
// this package can be its own worker).
func New(concurrency int, exe string) *Checker {
	if exe == "" {
		exe = selfExe()
	}
	return &Checker{concurrency: max(concurrency, 1), exe: exe}
}

// Compare reports whether password is the one hash was made from. An error
// says the worker could not be started, or ended before it answered.
func (c *Checker) Compare(hash, password []byte) (bool, error) {
	if len(hash) > maxHash || len(password) > maxPassword {
		return false, ErrTooLong
	}
	w, err := c.worker()
	if err != nil {
		return false, err
	}
	return w.compare(hash, password)
}

// Close ends the worker (comparisons in flight fail); a Compare after it
// fails.
func (c *Checker) Close() error {
	c.mu.Lock()
	w := c.w
	c.w, c.closed = nil, true
	c.mu.Unlock()
	if w != nil {
		w.stop()
	}
	return nil
}

// Pid is the running worker's process id, 0 when none runs.
func (c *Checker) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil || c.w.ended() {
		return 0
	}
	return c.w.cmd.Process.Pid
}

func (c *Checker) worker() (*worker, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("bcryptproc: checker closed")
	}
	if c.w != nil && !c.w.ended() {
		return c.w, nil
	}
	w, err := startWorker(c.exe, c.concurrency)
	if err != nil {
		return nil, err
	}
	c.w = w
	return w, nil
}

// worker is one worker process and the comparisons it has not answered.
type worker struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	done chan struct{} // closed once the worker's answers ended

	mu      sync.Mutex // serialises requests; guards the fields below
	nextID  uint32
	pending map[uint32]chan bool
	err     error // why the worker ended
	buf     []byte
}

func startWorker(exe string, concurrency int) (*worker, error) {
	cmd := exec.Command(exe)
	cmd.Args = []string{"kurz-bcrypt-worker"} // what ps shows
	cmd.Env = append(os.Environ(), envWorker+"=1", "GOMAXPROCS="+strconv.Itoa(concurrency))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bcryptproc: start worker: %w", err)
	}
	w := &worker{cmd: cmd, in: in, done: make(chan struct{}), pending: map[uint32]chan bool{}}
	go w.readAnswers(out)
	return w, nil
}

func (w *worker) ended() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

func (w *worker) compare(hash, password []byte) (bool, error) {
	answer := make(chan bool, 1)
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return false, err
	}
	w.nextID++
	id := w.nextID
	w.pending[id] = answer
	w.buf = appendRequest(w.buf[:0], id, hash, password)
	_, err := w.in.Write(w.buf)
	w.mu.Unlock()
	if err != nil {
		w.stop() // a worker that cannot be written to is of no use
	}
	select {
	case ok := <-answer:
		return ok, nil
	case <-w.done:
		select {
		case ok := <-answer: // answered just before it ended
			return ok, nil
		default:
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		return false, w.err
	}
}

// readAnswers hands each answer to its comparison until the worker's
// output ends, then fails the comparisons left and reaps the worker.
func (w *worker) readAnswers(out io.Reader) {
	r := bufio.NewReader(out)
	var a [5]byte
	var err error
	for {
		if _, err = io.ReadFull(r, a[:]); err != nil {
			break
		}
		id := binary.LittleEndian.Uint32(a[:4])
		w.mu.Lock()
		answer := w.pending[id]
		delete(w.pending, id)
		w.mu.Unlock()
		if answer != nil {
			answer <- a[4] == 1
		}
	}
	_ = w.in.Close()
	werr := w.cmd.Wait()
	w.mu.Lock()
	w.err = fmt.Errorf("bcryptproc: the worker ended (%v)", errors.Join(err, werr))
	w.pending = nil
	w.mu.Unlock()
	close(w.done)
}

// stop kills the worker and waits until its end is recorded.
func (w *worker) stop() {
	_ = w.cmd.Process.Kill()
	<-w.done
}
