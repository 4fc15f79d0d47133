// Command trace-waits reads a Go runtime execution trace (for example
// bench-scale's -api-trace) and lists every time a goroutine waited,
// runnable, longer than -min for a processor, with what ran on the
// processors meanwhile, summed by each running goroutine's entry function.
// It answers the question a scheduler latency profile (`go tool trace
// -pprof=sched`) leaves open: who held the processors.
//
//	go run ./hack/trace-waits -min 5ms api-trace.out
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	least := flag.Duration("min", 5e6, "List waits at least this long.")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: trace-waits [-min 5ms] trace.out")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "trace-waits:", err)
		os.Exit(1)
	}
	defer func() { _ = f.Close() }()
	a, err := analyze(f, *least)
	if err != nil {
		fmt.Fprintln(os.Stderr, "trace-waits:", err)
		os.Exit(1)
	}
	a.print(os.Stdout)
}
