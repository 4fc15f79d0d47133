package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// Events are inserted insertRows to a statement and the rest one by one;
// two events with the same key in one statement (a batch that was not
// aggregated) are summed, as in two statements.
func TestWriteManyRowsPerStatement(t *testing.T) {
	now := day0.Add(3 * time.Hour)
	s := openTest(t, testOptions(t), now)
	var events []analytics.Event
	links := 2*insertRows + 3 // full statements and a rest
	for i := range links {
		e := analytics.Event{
			Time: day0.Add(time.Hour), Link: analytics.LinkRef{UID: fmt.Sprint("u", i), Namespace: "ns"},
			Visitor: uint64(i + 1), Country: "DE", Clicks: int64(i + 1),
		}
		events = append(events, e, e) // the same key twice in a row
	}
	if err := s.Write(context.Background(), analytics.Batch{ID: "w-1", Events: events}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Query(context.Background(), analytics.Query{
		Namespace: "ns", GroupBy: analytics.GroupByLink, Granularity: analytics.Hour,
		Start: day0, End: now, Limit: 1000, Source: analytics.SourceEvents,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != links {
		t.Fatalf("%d links, want %d: %+v", len(res.Rows), links, res.Rows)
	}
	for _, r := range res.Rows {
		var i int
		if _, err := fmt.Sscanf(r.Key, "u%d", &i); err != nil {
			t.Fatal(err)
		}
		if r.Clicks != int64(2*(i+1)) || r.Visitors != 1 {
			t.Errorf("link %s: %d clicks, %d visitors; want %d and 1", r.Key, r.Clicks, r.Visitors, 2*(i+1))
		}
	}
}
