package otlp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// receiver is an OTLP/HTTP logs endpoint: it decodes every request and
// answers with the statuses queued in answers (then 200).
type receiver struct {
	mu      sync.Mutex
	reqs    []*collogs.ExportLogsServiceRequest
	headers []http.Header
	paths   []string
	answers []func(w http.ResponseWriter)
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req collogs.ExportLogsServiceRequest
	if r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP protobuf request", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, &req)
	rc.headers = append(rc.headers, r.Header.Clone())
	rc.paths = append(rc.paths, r.URL.Path)
	var answer func(http.ResponseWriter)
	if len(rc.answers) > 0 {
		answer, rc.answers = rc.answers[0], rc.answers[1:]
	}
	rc.mu.Unlock()
	if answer != nil {
		answer(w)
		return
	}
	out, _ := proto.Marshal(&collogs.ExportLogsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func status(code int, retryAfter string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(code)
	}
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.reqs)
}

// start serves rc and returns an exporter to it whose waits between
// attempts are recorded instead of slept.
func start(t *testing.T, rc http.Handler, mod func(*Options)) (*Exporter, *[]time.Duration) {
	t.Helper()
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	o := DefaultOptions()
	o.Endpoint = srv.URL
	if mod != nil {
		mod(&o)
	}
	x, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	var waits []time.Duration
	x.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	return x, &waits
}

var minute = time.Date(2026, 11, 3, 14, 7, 0, 0, time.UTC)

func events() []analytics.Event {
	return []analytics.Event{{
		Time: minute.Add(31 * time.Second), Link: analytics.LinkRef{UID: "u-1", Namespace: "team-a", Name: "spring", Domain: "go.example.com", Key: "spring"},
		Visitor: 0xabc, Device: analytics.DeviceMobile, OS: "iOS", Browser: "Safari", Country: "FR", City: "FR/Paris", Referrer: "news.example.org",
		UTMSource: "newsletter", UTMMedium: "email", UTMCampaign: "spring-sale", Clicks: 3,
	}, {
		Time: minute, Link: analytics.LinkRef{UID: "u-2", Namespace: "team-a", Name: "docs", Domain: "go.example.com", Key: "docs"},
		Device: analytics.DeviceBot, Clicks: 1,
	}}
}

func attrs(kvs []*common.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *common.AnyValue_StringValue:
			out[kv.GetKey()] = v.StringValue
		case *common.AnyValue_IntValue:
			out[kv.GetKey()] = v.IntValue
		default:
			out[kv.GetKey()] = v
		}
	}
	return out
}

func TestWriteSendsOneRecordPerRowWithItsAttributes(t *testing.T) {
	g := NewWithT(t)
	rc := &receiver{}
	x, _ := start(t, rc, func(o *Options) { o.Headers = map[string]string{"Authorization": "Bearer s3cret"} })
	g.Expect(x.Write(context.Background(), analytics.Batch{ID: "pod-a-1f2e-7", Events: events()})).To(Succeed())

	g.Expect(rc.reqs).To(HaveLen(1))
	g.Expect(rc.paths[0]).To(Equal("/v1/logs"))
	g.Expect(rc.headers[0].Get("Authorization")).To(Equal("Bearer s3cret"))
	rl := rc.reqs[0].GetResourceLogs()
	g.Expect(rl).To(HaveLen(1))
	g.Expect(attrs(rl[0].GetResource().GetAttributes())).To(Equal(map[string]any{"service.name": "kurz"}))
	recs := rl[0].GetScopeLogs()[0].GetLogRecords()
	g.Expect(recs).To(HaveLen(2))
	g.Expect(recs[0].GetEventName()).To(Equal(EventName))
	g.Expect(recs[0].GetTimeUnixNano()).To(Equal(uint64(minute.UnixNano())), "the row's minute")
	g.Expect(attrs(recs[0].GetAttributes())).To(Equal(map[string]any{
		"kurz.link.uid": "u-1", "kurz.link.namespace": "team-a", "kurz.link.name": "spring",
		"kurz.link.domain": "go.example.com", "kurz.link.key": "spring", "kurz.clicks": int64(3),
		"kurz.visitor": "0000000000000abc", "kurz.device": "mobile", "kurz.os": "iOS", "kurz.browser": "Safari",
		"kurz.country": "FR", "kurz.city": "FR/Paris", "kurz.referrer": "news.example.org", "kurz.utm_source": "newsletter",
		"kurz.utm_medium": "email", "kurz.utm_campaign": "spring-sale", "kurz.batch.id": "pod-a-1f2e-7",
	}))
	// Unknown values are left out, not sent empty; no visitor without a hash.
	g.Expect(attrs(recs[1].GetAttributes())).To(Equal(map[string]any{
		"kurz.link.uid": "u-2", "kurz.link.namespace": "team-a", "kurz.link.name": "docs",
		"kurz.link.domain": "go.example.com", "kurz.link.key": "docs", "kurz.clicks": int64(1),
		"kurz.device": "bot", "kurz.batch.id": "pod-a-1f2e-7",
	}))
}

func TestWriteSplitsABatchIntoBoundedRequests(t *testing.T) {
	g := NewWithT(t)
	rc := &receiver{}
	x, _ := start(t, rc, func(o *Options) { o.MaxRecords = 3 })
	var evs []analytics.Event
	for i := range 7 {
		e := events()[0]
		e.Clicks = int64(i + 1)
		evs = append(evs, e)
	}
	g.Expect(x.Write(context.Background(), analytics.Batch{ID: "b", Events: evs})).To(Succeed())
	var sizes []int
	var clicks int64
	for _, r := range rc.reqs {
		recs := r.GetResourceLogs()[0].GetScopeLogs()[0].GetLogRecords()
		sizes = append(sizes, len(recs))
		for _, rec := range recs {
			clicks += attrs(rec.GetAttributes())["kurz.clicks"].(int64)
		}
	}
	g.Expect(sizes).To(Equal([]int{3, 3, 1}))
	g.Expect(clicks).To(Equal(int64(28)))
}

func TestWriteRetriesTooManyRequestsAndUnavailableWithBackoff(t *testing.T) {
	g := NewWithT(t)
	rc := &receiver{answers: []func(http.ResponseWriter){
		status(http.StatusServiceUnavailable, ""), status(http.StatusServiceUnavailable, ""),
		status(http.StatusTooManyRequests, "7"), status(http.StatusBadGateway, "120"),
	}}
	x, waits := start(t, rc, func(o *Options) { o.Backoff = 100 * time.Millisecond })
	g.Expect(x.Write(context.Background(), analytics.Batch{ID: "b", Events: events()})).To(Succeed())
	g.Expect(rc.count()).To(Equal(5))
	// Doubling from Backoff; the server's Retry-After wins, capped at 30 s.
	g.Expect(*waits).To(Equal([]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 7 * time.Second, 30 * time.Second}))
}

func TestWriteGivesUpAfterAttempts(t *testing.T) {
	g := NewWithT(t)
	var answers []func(http.ResponseWriter)
	for range 10 {
		answers = append(answers, status(http.StatusServiceUnavailable, ""))
	}
	rc := &receiver{answers: answers}
	x, _ := start(t, rc, func(o *Options) { o.Attempts = 3 })
	err := x.Write(context.Background(), analytics.Batch{ID: "b", Events: events()})
	g.Expect(err).To(MatchError(And(ContainSubstring("503"), ContainSubstring("attempt 3"))))
	g.Expect(rc.count()).To(Equal(3))
}

func TestWriteDoesNotRetryABadRequestOrAPartialSuccess(t *testing.T) {
	g := NewWithT(t)
	rc := &receiver{answers: []func(http.ResponseWriter){status(http.StatusBadRequest, ""), func(w http.ResponseWriter) {
		out, _ := proto.Marshal(&collogs.ExportLogsServiceResponse{PartialSuccess: &collogs.ExportLogsPartialSuccess{RejectedLogRecords: 1, ErrorMessage: "attribute too long"}})
		_, _ = w.Write(out)
	}}}
	x, waits := start(t, rc, nil)
	err := x.Write(context.Background(), analytics.Batch{ID: "b", Events: events()})
	g.Expect(err).To(MatchError(ContainSubstring("400 Bad Request (not retried)")))
	err = x.Write(context.Background(), analytics.Batch{ID: "b", Events: events()})
	g.Expect(err).To(MatchError(ContainSubstring("rejected 1 records: attribute too long")))
	g.Expect(rc.count()).To(Equal(2))
	g.Expect(*waits).To(BeEmpty())
}

func TestWriteEndsWhenTheServerStalls(t *testing.T) {
	g := NewWithT(t)
	release := make(chan struct{})
	stalls := 0
	var mu sync.Mutex
	stall := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stalls++
		mu.Unlock()
		select { // a server that accepts and never answers
		case <-r.Context().Done():
		case <-release:
		}
	})
	x, waits := start(t, stall, func(o *Options) { o.Timeout = 100 * time.Millisecond; o.Attempts = 2 })
	t.Cleanup(func() { close(release) })
	err := x.Write(context.Background(), analytics.Batch{ID: "b", Events: events()})
	g.Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue(), "%v", err)
	g.Expect(*waits).To(HaveLen(1), "a timed-out attempt is retried")
	mu.Lock()
	g.Expect(stalls).To(Equal(2))
	mu.Unlock()

	// The caller's own cancellation is not retried.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = x.Write(ctx, analytics.Batch{ID: "b", Events: events()})
	g.Expect(errors.Is(err, context.Canceled)).To(BeTrue(), "%v", err)
}

func TestClosedExporterRefusesWrites(t *testing.T) {
	g := NewWithT(t)
	rc := &receiver{}
	x, _ := start(t, rc, nil)
	g.Expect(x.Close()).To(Succeed())
	g.Expect(x.Close()).To(Succeed())
	g.Expect(x.Write(context.Background(), analytics.Batch{ID: "b", Events: events()})).To(MatchError(ErrClosed))
	g.Expect(rc.count()).To(Equal(0))
}
