package flagbind_test

import (
	"flag"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/flagbind"
)

// words and numbers cover every kind Fields binds.
type words struct {
	Name     string `flag:"name" usage:"A \"name\"."`
	On       bool   `flag:"on" usage:"Switch."`
	Untagged string
}

type numbers struct {
	Count int           `flag:"count" usage:"How many."`
	Rate  float64       `flag:"rate" usage:"How fast."`
	Wait  time.Duration `flag:"wait" usage:"How long."`
}

func TestFields(t *testing.T) {
	g := NewWithT(t)
	w := words{Name: "n", Untagged: "u"}
	n := numbers{Count: 3, Rate: 1.5, Wait: time.Second}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	flagbind.Fields(fs, &w)
	flagbind.Fields(fs, &n)

	g.Expect(fs.Lookup("name").Usage).To(Equal(`A "name".`))
	g.Expect(fs.Lookup("count").DefValue).To(Equal("3"), "the field's value is the default")
	g.Expect(fs.Lookup("Untagged")).To(BeNil())
	g.Expect(fs.Parse([]string{"--name=x", "--on", "--count=4", "--rate=2.5", "--wait=1m"})).To(Succeed())
	g.Expect(w).To(Equal(words{Name: "x", On: true, Untagged: "u"}))
	g.Expect(n).To(Equal(numbers{Count: 4, Rate: 2.5, Wait: time.Minute}))
}

func TestFieldsRefusesUnknownTypes(t *testing.T) {
	o := struct {
		List []string `flag:"list"`
	}{}
	NewWithT(t).Expect(func() { flagbind.Fields(flag.NewFlagSet("test", flag.ContinueOnError), &o) }).To(PanicWith(ContainSubstring("--list")))
}
