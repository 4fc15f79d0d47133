package devenv

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/optionstest"
)

func TestOptionsValidate(t *testing.T) {
	optionstest.Validate(t, DefaultOptions, []optionstest.Case[Options]{
		{Name: "another data dir", Edit: func(o *Options) { o.DataDir = "/tmp/kurz" }, Error: ""},
		{Name: "no data dir", Edit: func(o *Options) { o.DataDir = "" }, Error: "data-dir"},
		{Name: "no progress writer", Edit: func(o *Options) { o.Out = nil }, Error: "Out"},
		{Name: "no token audience", Edit: func(o *Options) { o.TokenAudience = "" }, Error: "TokenAudience"},
	})
}

func TestOptionsFlags(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	g.Expect(optionstest.Parse(&o)).To(Succeed())
	g.Expect(o.DataDir).To(Equal(DefaultDataDir))
	g.Expect(optionstest.Parse(&o, "--data-dir", "/x")).To(Succeed())
	g.Expect(o.DataDir).To(Equal("/x"))
}
