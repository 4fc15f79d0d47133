package analytics

import (
	"net/url"
	"testing"
	"time"
)

func TestParseParams(t *testing.T) {
	now := time.Date(2025, 5, 15, 13, 27, 0, 0, time.UTC)
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, tc := range []struct {
		query string
		check func(q Query) bool
	}{
		{"", func(q Query) bool {
			return q.GroupBy == GroupByTimeseries && q.Granularity == Day && q.ExcludeBots && q.Limit == 0 &&
				q.Start.Equal(time.Date(2025, 4, 15, 0, 0, 0, 0, time.UTC)) && q.End.Equal(now)
		}},
		{"interval=24h", func(q Query) bool {
			return q.Granularity == Hour && q.Start.Equal(time.Date(2025, 5, 14, 13, 0, 0, 0, time.UTC))
		}},
		{"interval=1y", func(q Query) bool {
			return q.Granularity == Month && q.Start.Equal(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
		}},
		{"interval=all", func(q Query) bool { return q.Granularity == Month && q.Start.IsZero() }},
		{"interval=7d&timezone=Europe/Berlin", func(q Query) bool {
			return q.Location.String() == "Europe/Berlin" && q.Start.Equal(time.Date(2025, 5, 8, 0, 0, 0, 0, berlin))
		}},
		{"start=2025-05-01T00:00:00Z&end=2025-05-02T00:00:00Z", func(q Query) bool { return q.Granularity == Hour }},
		{"start=2025-01-01T00:00:00Z", func(q Query) bool { return q.Granularity == Day && q.End.Equal(now) }},
		{"interval=90d&granularity=month", func(q Query) bool { return q.Granularity == Month }},
		{"group_by=country&limit=5&exclude_bots=false", func(q Query) bool {
			return q.GroupBy == GroupByCountry && q.Limit == 5 && !q.ExcludeBots
		}},
		{"group_by=link", func(q Query) bool { return q.Limit == DefaultLimit }},
		{"device=mobile,tablet&country=DE&utm_source=a&utm_source=b", func(q Query) bool {
			return len(q.Filters[DimDevice]) == 2 && q.Filters[DimCountry][0] == "DE" && len(q.Filters[DimUTMSource]) == 2
		}},
		{"domain=x&key=y&tag=z", func(q Query) bool { return q.Filters == nil }},
	} {
		v, _ := url.ParseQuery(tc.query)
		q, err := ParseParams(v, now)
		if err != nil {
			t.Errorf("%q: %v", tc.query, err)
			continue
		}
		q.Namespace = "ns"
		if err := q.Validate(); err != nil {
			t.Errorf("%q: parsed query invalid: %v", tc.query, err)
		}
		if !tc.check(q) {
			t.Errorf("%q: got %+v", tc.query, q)
		}
	}
}

func TestParseParamsNamesTheBadParameter(t *testing.T) {
	now := time.Date(2025, 5, 15, 13, 27, 0, 0, time.UTC)
	for query, param := range map[string]string{
		"interval=2w":                            "interval",
		"interval=7d&start=2025-01-01T00:00:00Z": "interval",
		"start=yesterday":                        "start",
		"start=2025-05-02T00:00:00Z&end=2025-05-01T00:00:00Z": "start",
		"end=2025-05-01":   "end",
		"granularity=week": "granularity",
		"start=2020-01-01T00:00:00Z&granularity=hour": "granularity",
		"end=2025-05-01T00:00:00Z":                    "start",
		"timezone=Mars/Olympus":                       "timezone",
		"timezone=Local":                              "timezone",
		"timezone=../../etc/passwd":                   "timezone",
		"group_by=planet":                             "group_by",
		"group_by=country&limit=0":                    "limit",
		"group_by=country&limit=1001":                 "limit",
		"group_by=country&limit=ten":                  "limit",
		"limit=5":                                     "limit",
		"exclude_bots=maybe":                          "exclude_bots",
		"device=phone":                                "device",
		"colour=red":                                  "colour",
	} {
		v, _ := url.ParseQuery(query)
		q, err := ParseParams(v, now)
		if err == nil {
			q.Namespace = "ns"
			err = q.Validate()
		}
		qe, ok := AsQueryError(err)
		if !ok {
			t.Errorf("%q: got %v, want a QueryError naming %s", query, err, param)
			continue
		}
		if qe.Param != param {
			t.Errorf("%q: names %q (%s), want %q", query, qe.Param, qe.Reason, param)
		}
	}
}

func TestGranularityBuckets(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	// The night clocks go back: the hour from 01:00 comes twice.
	t0 := time.Date(2025, 11, 2, 0, 0, 0, 0, ny)
	var keys []string
	for b := t0; b.Before(t0.Add(4 * time.Hour)); b = Hour.Next(b) {
		keys = append(keys, b.Format(time.RFC3339))
	}
	if len(keys) != 4 || keys[1] == keys[2] {
		t.Fatalf("hours %v", keys)
	}
	if d := Day.Next(t0); d.Sub(t0) != 25*time.Hour {
		t.Fatalf("that day lasts %s", d.Sub(t0))
	}
	if m := Month.Truncate(time.Date(2025, 3, 31, 23, 0, 0, 0, time.UTC)); !m.Equal(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("month %s", m)
	}
}
