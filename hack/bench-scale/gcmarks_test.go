package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReadGCMarksFromGctrace(t *testing.T) {
	log := filepath.Join(t.TempDir(), "manager.log")
	body := `{"level":"info","msg":"starting"}
gc 121 @414.699s 1%: 0.24+292+0.027 ms clock, 0.48+1.4/276/678+0.054 ms cpu, 256->258->178 MB, 271 MB goal, 0 MB stacks, 0 MB globals, 4 P
gc 122 @418.393s 1%: 1.3+215+0.12 ms clock, 2.6+0/214/486+0.24 ms cpu, 253->257->182 MB, 268 MB goal, 0 MB stacks, 0 MB globals, 4 P (forced)
gc 123 @424.697s 1%: bad
`
	if err := os.WriteFile(log, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	marks, err := readGCMarks(log)
	if err != nil {
		t.Fatal(err)
	}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	want := []gcMark{
		{start: ms(414699), end: ms(414699 + 0.24 + 292 + 0.027)},
		{start: ms(418393), end: ms(418393 + 1.3 + 215 + 0.12)},
	}
	if len(marks) != len(want) {
		t.Fatalf("marks %v, want %v", marks, want)
	}
	for i := range want {
		if d := marks[i].start - want[i].start; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("mark %d starts at %s, want %s", i, marks[i].start, want[i].start)
		}
		if d := marks[i].end - want[i].end; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("mark %d ends at %s, want %s", i, marks[i].end, want[i].end)
		}
	}

	// A request that began before gc 122's mark and ended in it overlaps
	// it; one that ended before it or began after it does not.
	if !during(marks, ms(418390), ms(5)) {
		t.Error("a request into the mark: not during it")
	}
	if during(marks, ms(418380), ms(5)) || during(marks, ms(418700), ms(5)) {
		t.Error("a request outside every mark: during one")
	}
	n, covered := marked(marks, ms(418400), ms(420000))
	if n != 1 || covered != marks[1].end-ms(418400) {
		t.Errorf("marked: %d collections for %s, want 1 for %s", n, covered, marks[1].end-ms(418400))
	}
}
