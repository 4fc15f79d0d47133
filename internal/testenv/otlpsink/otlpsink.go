// Package otlpsink is an OTLP/HTTP logs endpoint for tests: it decodes
// every request with the protocol's own protobuf types, as a collector
// does, and keeps each log record's attributes.
package otlpsink

import (
	"io"
	"net/http"
	"sync"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Collector serves /v1/logs. With Block set it holds each request until
// Block is closed or the request ends, and then refuses it: a stalled
// collector.
type Collector struct {
	Block chan struct{}

	mu      sync.Mutex
	records []map[string]any
	auth    []string
}

func (c *Collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if c.Block != nil {
		select {
		case <-c.Block:
		case <-r.Context().Done():
		}
		http.Error(w, "stalled", http.StatusServiceUnavailable)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req collogs.ExportLogsServiceRequest
	if r.URL.Path != "/v1/logs" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP/HTTP protobuf logs request", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.auth = append(c.auth, r.Header.Get("Authorization"))
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				c.records = append(c.records, attributes(lr.GetAttributes()))
			}
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&collogs.ExportLogsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Records returns the attributes of every record received so far: string
// values as string, integers as int64.
func (c *Collector) Records() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string]any(nil), c.records...)
}

// Authorization returns the Authorization header of every request.
func (c *Collector) Authorization() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.auth...)
}

func attributes(kvs []*common.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *common.AnyValue_StringValue:
			m[kv.GetKey()] = v.StringValue
		case *common.AnyValue_IntValue:
			m[kv.GetKey()] = v.IntValue
		}
	}
	return m
}
