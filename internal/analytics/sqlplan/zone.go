package sqlplan

import (
	"fmt"
	"strings"
	"time"
)

// Piece is a stretch of time from minute From (unix minutes) on in which
// a zone's offset is Off minutes.
type Piece struct{ From, Off int64 }

// ZonePieces are loc's offsets over [start, end), following its
// transitions (daylight saving).
func ZonePieces(loc *time.Location, start, end time.Time) []Piece {
	var out []Piece
	t := start
	for {
		_, off := t.In(loc).Zone()
		out = append(out, Piece{From: t.Unix() / 60, Off: int64(off) / 60})
		_, next := t.In(loc).ZoneBounds()
		if next.IsZero() || !next.Before(end) {
			return out
		}
		t = next
	}
}

// UTCAligned reports whether local days are UTC days over the pieces.
func UTCAligned(ps []Piece) bool {
	for _, p := range ps {
		if p.Off != 0 {
			return false
		}
	}
	return true
}

// WholeHours reports whether every offset is a whole number of hours.
func WholeHours(ps []Piece) bool {
	for _, p := range ps {
		if p.Off%60 != 0 {
			return false
		}
	}
	return true
}

// LocalMinuteSQL is the SQL of col (unix minutes) as wall-clock minutes in
// the zone of the pieces.
func LocalMinuteSQL(col string, ps []Piece) string {
	if len(ps) == 1 {
		return fmt.Sprintf("(%s + %d)", col, ps[0].Off)
	}
	var b strings.Builder
	b.WriteString("(CASE")
	for i := 1; i < len(ps); i++ {
		fmt.Fprintf(&b, " WHEN %s < %d THEN %s + %d", col, ps[i].From, col, ps[i-1].Off)
	}
	fmt.Fprintf(&b, " ELSE %s + %d END)", col, ps[len(ps)-1].Off)
	return b.String()
}
