package importer

import (
	"cmp"
	"fmt"
	"io"
	"slices"
)

// Result is what a source holds for kurz.
type Result struct {
	// Format is the format read (detected or forced).
	Format Format
	// Links are the valid links, in source order, checked with the API's own
	// rules and normalized (domain in punycode, tags deduplicated).
	Links []Link
	// Invalid are the records kurz would refuse, with every reason; an
	// import stops on them unless told to skip them.
	Invalid []Problem
	// Skipped are records left out on purpose (banned or disabled in the
	// source, a domain's root link); reported, never an error.
	Skipped []Problem
	// Dropped counts, per source field, the valid links whose value for it
	// cannot carry over.
	Dropped map[Drop]int
}

// Problem is a record that is not imported, and why.
type Problem struct {
	At     string
	Reason string
}

func (p Problem) String() string { return p.At + ": " + p.Reason }

// DroppedFields returns the dropped fields with their counts, most frequent
// first (then by name), for the report.
func (r *Result) DroppedFields() []DropCount {
	out := make([]DropCount, 0, len(r.Dropped))
	for d, n := range r.Dropped {
		out = append(out, DropCount{Drop: d, Links: n})
	}
	slices.SortFunc(out, func(a, b DropCount) int {
		return cmp.Or(cmp.Compare(b.Links, a.Links), cmp.Compare(a.Field, b.Field), cmp.Compare(a.Why, b.Why))
	})
	return out
}

// DropCount is a dropped field and how many links had a value for it.
type DropCount struct {
	Drop
	Links int
}

// maxListed bounds the records a report names one by one; the rest are
// counted.
const maxListed = 20

// WriteReport writes what did not carry over: the skipped records, the
// invalid ones (when they were skipped rather than fatal) and the dropped
// fields with their counts.
func (r *Result) WriteReport(w io.Writer) {
	writeProblems(w, "Left out on purpose", r.Skipped)
	writeProblems(w, "Invalid, skipped", r.Invalid)
	fields := r.DroppedFields()
	if len(fields) == 0 {
		fmt.Fprintf(w, "Every field of the %d links carried over.\n", len(r.Links))
		return
	}
	fmt.Fprintf(w, "Not carried over (kurz has no place for them), per source field:\n")
	width := 0
	for _, f := range fields {
		width = max(width, len(f.Field))
	}
	for _, f := range fields {
		fmt.Fprintf(w, "  %-*s  %6d %-5s  (%s)\n", width, f.Field, f.Links, plural(f.Links, "link", "links"), f.Why)
	}
}

// WriteInvalid lists the invalid records, for an import that stops on
// them.
func (r *Result) WriteInvalid(w io.Writer) {
	writeProblems(w, "Invalid", r.Invalid)
}

// writeProblems lists problems under a title, the first maxListed by name.
func writeProblems(w io.Writer, title string, ps []Problem) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: %d %s\n", title, len(ps), plural(len(ps), "record", "records"))
	for i, p := range ps {
		if i == maxListed {
			fmt.Fprintf(w, "  ... and %d more\n", len(ps)-maxListed)
			break
		}
		fmt.Fprintf(w, "  %s\n", p)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
