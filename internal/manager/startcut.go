package manager

import (
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kurz-dev/kurz/internal/initialevents"
)

// compactedHint is logged with a cut that kube-apiserver answered with
// 410: the revision the stream reads at is gone, which without the watch
// cache for Links ends every stream longer than etcd keeps that revision.
const compactedHint = "kube-apiserver no longer has the revision this list reads at: etcd is compacted every --etcd-compaction-interval (5m by default), so without kube-apiserver's watch cache for Links a start must stream every Link within 5 to 10 minutes; give kube-apiserver more CPU, raise that interval, or turn the watch cache for Links on (docs/scaling.md)"

// logCut says that the Link informer's first list stream ended before its
// end. client-go then lists every Link again from the start, logging
// nothing at kurz's default level: a replica whose every attempt is cut
// so would wait unready, with no word of why.
func logCut(log logr.Logger, c initialevents.Cut) {
	kv := []any{"events", c.Events, "after", c.Took.Round(time.Millisecond).String()}
	if c.Err != nil {
		kv = append(kv, "reason", c.Err.Error())
	}
	if apierrors.IsResourceExpired(c.Err) || apierrors.IsGone(c.Err) {
		kv = append(kv, "hint", compactedHint)
	}
	log.Info("the stream of every Link ended before its last Link; client-go lists them all again", kv...)
}
