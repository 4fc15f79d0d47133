package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/devenv"
	"github.com/kurz-dev/kurz/internal/manager"
)

// decodeFloor reads every Link's watch-list as a replica's start does,
// through kurz's own ListerWatcher (the same request, client-go's watch and
// kurz's decoder and transform), and drops each Link once decoded: no
// index, no store, nothing else of a replica. What a start costs past the
// stream floor for decoding alone, read just before the start and logged
// beside it; 0 when it failed.
func decodeFloor(ctx context.Context, c config, env *devenv.Env) time.Duration {
	sctx, cancel := context.WithTimeout(ctx, c.serveTimeout)
	defer cancel()
	lw, err := manager.LinkListWatch(env.Config())
	if err != nil {
		logf("decode floor: %v", err)
		return 0
	}
	yes := true
	start := time.Now()
	before := markSelf(env)
	w, err := lw.WatchWithContext(sctx, metav1.ListOptions{
		SendInitialEvents: &yes, AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	})
	if err != nil {
		logf("decode floor: %v", err)
		return 0
	}
	defer w.Stop()
	n, err := untilInitialEventsEnd(w)
	if err != nil {
		logf("decode floor: %v after %d Links (load %s)", err, n, uptime())
		return 0
	}
	d := time.Since(start)
	logf("decode floor: every Link's watch-list, %d Links decoded by kurz's decoder and dropped, in %s (load %s); %s", n, secs(d), uptime(),
		before.to(markSelf(env)).describe("bench-scale"))
	return d
}

// untilInitialEventsEnd counts the Links of w's initial events until the
// bookmark that ends them.
func untilInitialEventsEnd(w watch.Interface) (int, error) {
	n := 0
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added:
			if _, ok := ev.Object.(*kurzv1alpha1.Link); ok {
				n++
			}
		case watch.Bookmark:
			if l, ok := ev.Object.(*kurzv1alpha1.Link); ok && l.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
				return n, nil
			}
		case watch.Error:
			return n, fmt.Errorf("watch error: %v", ev.Object)
		}
	}
	return n, errors.New("the stream ended before its initial events did")
}
