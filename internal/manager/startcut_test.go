package manager

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kurz-dev/kurz/internal/initialevents"
)

// A cut stream is logged with what came and why; a 410 (etcd compacted
// the stream's revision) also says what to change.
func TestLogCut(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		reason   string
		withHint bool
	}{
		{"compacted", apierrors.NewResourceExpired("The resourceVersion for the provided list is too old."), "too old", true},
		// An older server's 410 reason.
		{"gone", &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonGone, Message: "gone"}}, "gone", true},
		{"other error", errors.New("stream reset"), "stream reset", false},
		{"closed", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lines []string
			log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
			logCut(log, initialevents.Cut{Events: 412345, Took: 8*time.Minute + 12*time.Second, Err: tc.err})
			if len(lines) != 1 {
				t.Fatalf("logged %d lines, want 1: %q", len(lines), lines)
			}
			line := lines[0]
			for _, want := range []string{`"events"=412345`, `"after"="8m12s"`} {
				if !strings.Contains(line, want) {
					t.Errorf("%s: no %s", line, want)
				}
			}
			if got := strings.Contains(line, `"reason"=`); got != (tc.err != nil) || !strings.Contains(line, tc.reason) {
				t.Errorf("%s: reason logged %v, want %v with %q", line, got, tc.err != nil, tc.reason)
			}
			if got := strings.Contains(line, "--etcd-compaction-interval"); got != tc.withHint {
				t.Errorf("%s: hint %v, want %v", line, got, tc.withHint)
			}
		})
	}
}
