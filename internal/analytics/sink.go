package analytics

// Sink takes enriched click events as the capture's consumer makes them:
// the store writer is one (it aggregates and writes batches), webhooks'
// link.clicked dispatcher another. Clicked is called on the consumer's one
// goroutine, for every click in order: it must not block (a sink with slow
// work queues it, bounded, and drops and counts beyond) and must not retain
// e, which is reused for the next click (copy what it keeps).
type Sink interface {
	Clicked(e *Event)
}

// Flusher is a Sink that holds events between calls: the consumer calls
// Flush every flush interval and once when the replica stops, on the same
// goroutine as Clicked.
type Flusher interface {
	Flush()
}
