package initialevents

import (
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// batchSize is how many events go to a sink group at once: a channel send
// per event would cost more than most sinks' upserts.
const batchSize = 256

// op is an initial-phase event for the sinks.
type op[T any] struct {
	obj T
	del bool
}

// tapped is a watch whose events pass through a goroutine that, until the
// bookmark ending the initial events, also gives them to the sink groups.
type tapped[T runtime.Object] struct {
	inner watch.Interface
	out   chan watch.Event

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

func tap[T runtime.Object](w watch.Interface, f *Feed[T], groups [][]Sink[T]) *tapped[T] {
	t := &tapped[T]{inner: w, out: make(chan watch.Event), stop: make(chan struct{}), done: make(chan struct{})}
	go t.run(f, groups)
	return t
}

func (t *tapped[T]) ResultChan() <-chan watch.Event { return t.out }

// Stop stops the watch and returns once an unfinished initial stream is
// taken back out of the sinks, so that the reflector's next attempt starts
// from sinks as they were.
func (t *tapped[T]) Stop() {
	t.stopOnce.Do(func() {
		close(t.stop)
		t.inner.Stop()
	})
	<-t.done
}

func (t *tapped[T]) run(f *Feed[T], groups [][]Sink[T]) {
	defer close(t.done)
	defer close(t.out)
	began := time.Now()
	fd := newFeeding(groups)
	initial := true
	// errEvent is the ERROR event of the initial stream, if one came: the
	// reflector stops the watch on it.
	var errEvent error
	// undo takes an unfinished stream back out of the sinks and reports it
	// cut when the server ended it.
	undo := func(byServer bool) {
		n := fd.undo()
		if byServer || errEvent != nil {
			f.cut(Cut{Events: n, Took: time.Since(began), Err: errEvent})
		}
	}
	for {
		var ev watch.Event
		var ok, stopped bool
		select {
		case ev, ok = <-t.inner.ResultChan():
		case <-t.stop:
			stopped = true
		}
		if !ok {
			if initial {
				undo(!stopped)
			}
			return
		}
		if initial {
			switch {
			case endsInitialEvents(ev):
				n := fd.finish()
				f.end(&Stream{Events: n, Began: began, Took: time.Since(began)})
				initial = false
			case ev.Type == watch.Error:
				errEvent = apierrors.FromObject(ev.Object)
			default:
				fd.add(ev)
			}
		}
		select {
		case t.out <- ev:
		case <-t.stop:
			if initial {
				undo(false)
			}
			return
		}
	}
}

// endsInitialEvents tells the bookmark that ends a stream's initial events.
func endsInitialEvents(ev watch.Event) bool {
	if ev.Type != watch.Bookmark {
		return false
	}
	m, ok := ev.Object.(metav1.Object)
	return ok && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

// feeding is one stream's delivery to the sink groups, each on its own
// goroutine.
type feeding[T runtime.Object] struct {
	sinks [][]Sink[T]
	chans []chan []op[T]
	wg    sync.WaitGroup
	batch []op[T]
	// sent is every batch given to the sinks, to take back on undo.
	sent [][]op[T]
}

func newFeeding[T runtime.Object](groups [][]Sink[T]) *feeding[T] {
	fd := &feeding[T]{sinks: groups}
	for _, sinks := range groups {
		ch := make(chan []op[T], 4)
		fd.chans = append(fd.chans, ch)
		fd.wg.Go(func() {
			for batch := range ch {
				apply(sinks, batch)
			}
		})
	}
	return fd
}

// apply gives a batch to sinks, each op to every sink in order.
func apply[T any](sinks []Sink[T], batch []op[T]) {
	for _, o := range batch {
		for _, s := range sinks {
			if o.del {
				s.Delete(o.obj)
			} else {
				s.Upsert(o.obj)
			}
		}
	}
}

// add queues the object of an Added, Modified or Deleted event of type T;
// the reflector fails the stream on anything else, and undo follows.
func (fd *feeding[T]) add(ev watch.Event) {
	obj, ok := ev.Object.(T)
	if !ok {
		return
	}
	switch ev.Type {
	case watch.Added, watch.Modified:
		fd.batch = append(fd.batch, op[T]{obj: obj})
	case watch.Deleted:
		fd.batch = append(fd.batch, op[T]{obj: obj, del: true})
	default:
		return
	}
	if len(fd.batch) == batchSize {
		fd.flush()
	}
}

func (fd *feeding[T]) flush() {
	if len(fd.batch) == 0 {
		return
	}
	for _, ch := range fd.chans {
		ch <- fd.batch
	}
	fd.sent = append(fd.sent, fd.batch)
	fd.batch = make([]op[T], 0, batchSize)
}

// wait closes the groups' channels and waits until they took all.
func (fd *feeding[T]) wait() {
	for _, ch := range fd.chans {
		close(ch)
	}
	fd.wg.Wait()
}

// finish gives the sinks what is queued, waits until they took it all,
// and returns how many events they took.
func (fd *feeding[T]) finish() int {
	fd.flush()
	fd.wait()
	n := 0
	for _, batch := range fd.sent {
		n += len(batch)
	}
	fd.sent = nil
	return n
}

// undo waits for the sinks, then deletes from them every object the stream
// gave them: before the informer's first list, they held nothing else. It
// returns how many objects the stream had sent.
func (fd *feeding[T]) undo() int {
	fd.wait()
	n := len(fd.batch)
	for _, batch := range fd.sent {
		n += len(batch)
	}
	for _, sinks := range fd.sinks {
		for _, batch := range fd.sent {
			for _, o := range batch {
				for _, s := range sinks {
					s.Delete(o.obj)
				}
			}
		}
	}
	fd.sent, fd.batch = nil, nil
	return n
}
