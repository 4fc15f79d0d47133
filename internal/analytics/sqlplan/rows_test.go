package sqlplan

import (
	"slices"
	"testing"
	"time"
)

func day(s string) int64 {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t.Unix() / 86400
}

func TestMonthTotalRuns(t *testing.T) {
	sep, oct := MonthOfDay(day("2026-09-01")), MonthOfDay(day("2026-10-01"))
	runs := [][2]int64{{day("2026-08-29"), day("2026-10-20")}, {day("2026-10-22"), day("2026-11-26")}}
	// October is current but not wholly in a run (the 20th and 21st are not rolled up).
	months, days := MonthTotalRuns(runs, map[int64]bool{sep: true, oct: true})
	if !slices.Equal(months, []int64{sep}) {
		t.Errorf("months = %v, want [%d]", months, sep)
	}
	want := [][2]int64{{day("2026-08-29"), day("2026-09-01")}, {day("2026-10-01"), day("2026-10-20")}, {day("2026-10-22"), day("2026-11-26")}}
	if !slices.Equal(days, want) {
		t.Errorf("days = %v, want %v", days, want)
	}
	// Without current totals everything stays days.
	months, days = MonthTotalRuns(runs, nil)
	if len(months) != 0 || !slices.Equal(days, runs) {
		t.Errorf("no current months: months %v days %v", months, days)
	}
	// One run over two whole current months: no days left.
	months, days = MonthTotalRuns([][2]int64{{day("2026-09-01"), day("2026-11-01")}}, map[int64]bool{sep: true, oct: true})
	if !slices.Equal(months, []int64{sep, oct}) || len(days) != 0 {
		t.Errorf("two months: months %v days %v", months, days)
	}
}
