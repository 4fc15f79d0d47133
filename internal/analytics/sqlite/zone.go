package sqlite

import (
	"fmt"
	"strings"
	"time"
)

// piece is a stretch of time from minute `from` (unix minutes) on in which
// a zone's offset is off minutes.
type piece struct{ from, off int64 }

// zonePieces are loc's offsets over [start, end), following its
// transitions (daylight saving).
func zonePieces(loc *time.Location, start, end time.Time) []piece {
	var out []piece
	t := start
	for {
		_, off := t.In(loc).Zone()
		out = append(out, piece{from: t.Unix() / 60, off: int64(off) / 60})
		_, next := t.In(loc).ZoneBounds()
		if next.IsZero() || !next.Before(end) {
			return out
		}
		t = next
	}
}

// utcAligned reports whether local days are UTC days over the pieces.
func utcAligned(ps []piece) bool {
	for _, p := range ps {
		if p.off != 0 {
			return false
		}
	}
	return true
}

// wholeHours reports whether every offset is a whole number of hours.
func wholeHours(ps []piece) bool {
	for _, p := range ps {
		if p.off%60 != 0 {
			return false
		}
	}
	return true
}

// localMinuteSQL is the SQL of col (unix minutes) as wall-clock minutes in
// the zone of the pieces.
func localMinuteSQL(col string, ps []piece) string {
	if len(ps) == 1 {
		return fmt.Sprintf("(%s + %d)", col, ps[0].off)
	}
	var b strings.Builder
	b.WriteString("(CASE")
	for i := 1; i < len(ps); i++ {
		fmt.Fprintf(&b, " WHEN %s < %d THEN %s + %d", col, ps[i].from, col, ps[i-1].off)
	}
	fmt.Fprintf(&b, " ELSE %s + %d END)", col, ps[len(ps)-1].off)
	return b.String()
}
