package otlp

import (
	"strconv"
	"time"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	resource "go.opentelemetry.io/proto/otlp/resource/v1"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// EventName is every record's event name.
const EventName = "kurz.link.click"

// Request is the OTLP request for events of batch id: one log record per
// aggregated row (see the package doc), observed at now.
func Request(id string, events []analytics.Event, now time.Time) *collogs.ExportLogsServiceRequest {
	recs := make([]*logs.LogRecord, len(events))
	for i := range events {
		recs[i] = record(id, &events[i], now)
	}
	return &collogs.ExportLogsServiceRequest{ResourceLogs: []*logs.ResourceLogs{{
		Resource: &resource.Resource{Attributes: []*common.KeyValue{str("service.name", "kurz")}},
		ScopeLogs: []*logs.ScopeLogs{{
			Scope:      &common.InstrumentationScope{Name: "github.com/kurz-dev/kurz/analytics"},
			LogRecords: recs,
		}},
	}}}
}

func record(id string, e *analytics.Event, now time.Time) *logs.LogRecord {
	attrs := make([]*common.KeyValue, 0, 16)
	add := func(k, v string) {
		if v != "" {
			attrs = append(attrs, str(k, v))
		}
	}
	add("kurz.link.uid", e.Link.UID)
	add("kurz.link.namespace", e.Link.Namespace)
	add("kurz.link.name", e.Link.Name)
	add("kurz.link.domain", e.Link.Domain)
	add("kurz.link.key", e.Link.Key)
	attrs = append(attrs, &common.KeyValue{Key: "kurz.clicks", Value: &common.AnyValue{Value: &common.AnyValue_IntValue{IntValue: e.Clicks}}})
	if e.Visitor != 0 {
		add("kurz.visitor", hex16(e.Visitor))
	}
	add("kurz.device", e.Device.String())
	add("kurz.os", e.OS)
	add("kurz.browser", e.Browser)
	add("kurz.country", e.Country)
	add("kurz.city", e.City)
	add("kurz.referrer", e.Referrer)
	add("kurz.utm_source", e.UTMSource)
	add("kurz.utm_medium", e.UTMMedium)
	add("kurz.utm_campaign", e.UTMCampaign)
	add("kurz.batch.id", id)
	return &logs.LogRecord{
		TimeUnixNano:         uint64(e.Time.Truncate(time.Minute).UnixNano()),
		ObservedTimeUnixNano: uint64(now.UnixNano()),
		SeverityNumber:       logs.SeverityNumber_SEVERITY_NUMBER_INFO,
		SeverityText:         "INFO",
		EventName:            EventName,
		Body:                 &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: "click"}},
		Attributes:           attrs,
	}
}

func hex16(v uint64) string {
	s := strconv.FormatUint(v, 16)
	for len(s) < 16 {
		s = "0" + s
	}
	return s
}

func str(k, v string) *common.KeyValue {
	return &common.KeyValue{Key: k, Value: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: v}}}
}
