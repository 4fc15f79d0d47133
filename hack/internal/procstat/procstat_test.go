//go:build linux

package procstat

import (
	"os"
	"testing"
	"time"
)

func TestCPUSecondsParsesStat(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       float64
		ok         bool
	}{
		{"plain", "4242 (kube-apiserver) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 12 0 100 0 0", 18.01, true},
		// A command may hold ") " and spaces: the fields start after the last ')'.
		{"command with parentheses", "7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 250 50 0 0 20 0 1 0 1 0 0", 3, true},
		{"too short", "7 (x) R 1 7", 0, false},
		{"no command", "7 x R", 0, false},
		{"not a number", "7 (x) R 1 7 7 0 -1 0 0 0 0 0 u s 0 0", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := cpuSeconds([]byte(tc.stat))
			if ok != tc.ok || got != tc.want {
				t.Fatalf("cpuSeconds(%q) = %v, %v; want %v, %v", tc.stat, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestCPUSecondsOfThisProcessGrows(t *testing.T) {
	before := CPUSeconds(os.Getpid())
	// Spin until the kernel's tick-based count moves: at least 1/100 s of CPU.
	deadline := time.Now().Add(10 * time.Second)
	x := 0
	for CPUSeconds(os.Getpid()) <= before {
		if time.Now().After(deadline) {
			t.Fatalf("CPU time stayed at %v s through 10 s of spinning", before)
		}
		for i := range 1_000_000 {
			x += i
		}
	}
	_ = x
	if CPUSeconds(1<<30) != 0 {
		t.Fatal("a process that does not exist has CPU time")
	}
}
