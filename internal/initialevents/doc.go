// Package initialevents hands the objects of an informer's first
// watch-list stream to kurz's indexes while the stream is read, rather than
// after its last event.
//
// With a watch-list (kube-apiserver streams every object as an initial ADDED
// event, then a bookmark that ends them), client-go's reflector holds the
// streamed objects aside and hands them to the informer in one Replace once
// the bookmark came; only then do the informer's event handlers build their
// indexes, one object after the other. At a million Links on the 2-core
// machine that was 24 to 31 s after the last byte, with nothing left to
// read (docs/scaling.md, "Where a first start's time goes past the floor").
//
// A Feed sits between the informer's ListerWatcher and its reflector. The
// first stream with initial events that completes goes, as it arrives, to
// the Feed's sinks, each group on its own goroutine as the informer runs
// each handler on its own; the bookmark reaches the reflector only once
// every sink has taken every object. The handlers of those sinks then skip
// the adds of the informer's initial list (Feed.Fed), which are the same
// objects. A stream that fails before its bookmark is taken back out of the
// sinks before the reflector's next attempt, so what a sink holds is always
// one consistent list or nothing. Later relists (after a watch expired)
// are left to the informer, which tells deletions from them.
package initialevents
