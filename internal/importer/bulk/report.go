package bulk

import (
	"fmt"
	"io"
	"time"
)

// Summary is what an import through the API did.
type Summary struct {
	// Created and Present count the links created and those whose key was
	// already taken in the workspace.
	Created, Present int
	// PresentAt names the links already present, in source order.
	PresentAt []string
	// Failed are the links the API refused, with its answer.
	Failed []Failure
	// Unsent counts the links not sent because the import stopped.
	Unsent  int
	Elapsed time.Duration
}

// Failure is a link the API refused.
type Failure struct {
	At, Address, Reason string
}

func (r *run) summary(elapsed time.Duration) *Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &Summary{Elapsed: elapsed}
	for i, l := range r.links {
		switch {
		case !r.answered[i]:
			s.Unsent++
		case r.outcomes[i] == created:
			s.Created++
		case r.outcomes[i] == present:
			s.Present++
			s.PresentAt = append(s.PresentAt, l.At+" ("+l.Domain+"/"+l.Key+")")
		default:
			s.Failed = append(s.Failed, Failure{At: l.At, Address: l.Domain + "/" + l.Key, Reason: r.reasons[i]})
		}
	}
	return s
}

// WriteReport writes what the import did: counts, the links already
// present and every failure (the first ones by name).
func (s *Summary) WriteReport(w io.Writer) {
	fmt.Fprintf(w, "Created %d links, %d already present, %d failed, in %s.\n",
		s.Created, s.Present, len(s.Failed), s.Elapsed.Round(100*time.Millisecond))
	if s.Unsent > 0 {
		fmt.Fprintf(w, "Not sent: %d links (the import stopped; run it again to go on, nothing is created twice).\n", s.Unsent)
	}
	list(w, "Already present (their keys are taken in the workspace; not compared, not changed)", s.PresentAt)
	failures := make([]string, len(s.Failed))
	for i, f := range s.Failed {
		failures[i] = fmt.Sprintf("%s (%s): %s", f.At, f.Address, f.Reason)
	}
	list(w, "Failed", failures)
}

// listed bounds the names a report lists one by one.
const listed = 20

func list(w io.Writer, title string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: %d\n", title, len(lines))
	for i, l := range lines {
		if i == listed {
			fmt.Fprintf(w, "  ... and %d more\n", len(lines)-listed)
			return
		}
		fmt.Fprintf(w, "  %s\n", l)
	}
}
