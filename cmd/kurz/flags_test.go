package main

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kurz-dev/kurz/internal/manager"
)

// tableFlag is a row of docs/flags.md's tables, split per flag.
type tableFlag struct {
	name    string
	devOnly bool
	// manager and dev are the defaults the table states, "" where it
	// describes one in words (a pod's namespace, half the CPUs).
	manager, dev string
}

var (
	backticked = regexp.MustCompile("`([^`]*)`")
	flagName   = regexp.MustCompile("^--([a-z0-9-]+)$")
	// parenthesised remarks after a default: `0` (no limit).
	remark = regexp.MustCompile(`\([^)]*\)`)
)

// flagsPage is the page whose tables document every flag.
const flagsPage = "../../docs/flags.md"

// tableFlags reads the rows of every table in docs/flags.md (one table per
// concern) that start with a flag.
func tableFlags(t *testing.T) []tableFlag {
	t.Helper()
	b, err := os.ReadFile(flagsPage)
	if err != nil {
		t.Fatal(err)
	}
	var flags []tableFlag
	for line := range strings.SplitSeq(string(b), "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) != 3 || !strings.HasPrefix(cells[0], "| `--") {
			continue
		}
		var names []string
		for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
			if n := flagName.FindStringSubmatch(m[1]); n != nil {
				names = append(names, n[1])
			}
		}
		mgr, dev, found := strings.Cut(cells[1], " / ")
		if !found {
			dev = mgr
		}
		mgrs, devs := defaults(mgr, len(names)), defaults(dev, len(names))
		for i, n := range names {
			flags = append(flags, tableFlag{name: n, devOnly: strings.Contains(cells[2], "`dev` only"), manager: mgrs[i], dev: devs[i]})
		}
	}
	if len(flags) < 40 {
		t.Fatalf("read only %d flags from %s's tables", len(flags), flagsPage)
	}
	return flags
}

// defaults reads a default cell for n flags: backticked values only (one
// for all or one each), else n empty strings (described in words).
func defaults(cell string, n int) []string {
	out := make([]string, n)
	values := backticked.FindAllStringSubmatch(cell, -1)
	rest := strings.Trim(backticked.ReplaceAllString(remark.ReplaceAllString(cell, ""), ""), " ,")
	if rest != "" || (len(values) != 1 && len(values) != n) {
		return out
	}
	for i := range out {
		v := values[min(i, len(values)-1)][1]
		if !strings.Contains(v, "<") { // a placeholder: <data-dir>/clicks.spool
			out[i] = v
		}
	}
	return out
}

var funcDefault = regexp.MustCompile(`\(default "([^"]*)"\)`)

// defValue is the default -h shows: a flag.Func has none of its own and
// names it in its usage.
func defValue(f *flag.Flag) string {
	if m := funcDefault.FindStringSubmatch(f.Usage); f.DefValue == "" && m != nil {
		return m[1]
	}
	return f.DefValue
}

// sameDefault compares durations by value (1h is 1h0m0s).
func sameDefault(documented, actual string) bool {
	a, errA := time.ParseDuration(documented)
	b, errB := time.ParseDuration(actual)
	if errA == nil && errB == nil {
		return a == b
	}
	return documented == actual
}

// TestFlagTable keeps docs/flags.md true: its tables name every flag of
// both commands (the logger's zap-* flags as one row), no other, mark the
// dev-only ones, and state the defaults they have.
func TestFlagTable(t *testing.T) {
	g := NewWithT(t)
	o, zo := manager.DefaultOptions(), zap.Options{}
	managerFlags := flag.NewFlagSet("kurz manager", flag.ContinueOnError)
	bindManagerFlags(managerFlags, &o, &zo)
	d := defaultDevOptions()
	devFlags := flag.NewFlagSet("kurz dev", flag.ContinueOnError)
	d.BindFlags(devFlags)

	documented := map[string]bool{}
	for _, rf := range tableFlags(t) {
		documented[rf.name] = true
		df := devFlags.Lookup(rf.name)
		g.Expect(df).NotTo(BeNil(), "docs/flags.md names --%s, which kurz dev does not have", rf.name)
		mf := managerFlags.Lookup(rf.name)
		if rf.devOnly {
			g.Expect(mf).To(BeNil(), "docs/flags.md says --%s is dev only, but kurz manager has it", rf.name)
			rf.manager = ""
		} else {
			g.Expect(mf).NotTo(BeNil(), "docs/flags.md names --%s, which kurz manager does not have", rf.name)
		}
		if strings.HasPrefix(rf.name, "zap-") {
			continue // the logger's own flags; kurz dev picks another encoder
		}
		if rf.manager != "" {
			g.Expect(sameDefault(rf.manager, defValue(mf))).To(BeTrue(), "docs/flags.md: --%s defaults to %q in kurz manager, the flag says %q", rf.name, rf.manager, defValue(mf))
		}
		if rf.dev != "" && df != nil {
			g.Expect(sameDefault(rf.dev, defValue(df))).To(BeTrue(), "docs/flags.md: --%s defaults to %q in kurz dev, the flag says %q", rf.name, rf.dev, defValue(df))
		}
	}
	devFlags.VisitAll(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "zap-") {
			g.Expect(documented).To(HaveKey(f.Name), "--%s is missing from docs/flags.md's tables", f.Name)
		}
	})
}
