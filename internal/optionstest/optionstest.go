package optionstest

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/onsi/gomega"
)

// Case is one edit of the default options and the error it must cause: a
// text the message contains (the flag's name), or "" for valid options.
type Case[O any] struct {
	Name  string
	Edit  func(*O)
	Error string
}

// Validate runs the cases: each edits defaults() and checks Validate. The
// defaults themselves must be valid.
func Validate[O interface{ Validate() error }](t *testing.T, defaults func() O, cases []Case[O]) {
	t.Helper()
	gomega.NewWithT(t).Expect(defaults().Validate()).To(gomega.Succeed(), "the defaults are valid")
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			o := defaults()
			tc.Edit(&o)
			if tc.Error == "" {
				g.Expect(o.Validate()).To(gomega.Succeed())
			} else {
				err := o.Validate()
				g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring(tc.Error)))
				ExpectEachOnce(g, err)
			}
		})
	}
}

// Parse binds o's flags on a fresh flag set and parses args into o.
func Parse(o interface{ BindFlags(*flag.FlagSet) }, args ...string) error {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	return fs.Parse(args)
}

// ExpectEachOnce checks that err, errors joined one a line, reports no
// problem twice: options validated once, at the composition root.
func ExpectEachOnce(g gomega.Gomega, err error) {
	seen := map[string]bool{}
	for _, line := range strings.Split(err.Error(), "\n") {
		g.Expect(seen[line]).To(gomega.BeFalse(), "reported twice: %s", line)
		seen[line] = true
	}
}
