package v1alpha1

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestLinkShortURL(t *testing.T) {
	g := NewWithT(t)
	l := &Link{Spec: LinkSpec{Domain: "go.example", Key: "Summer_Sale"}}
	g.Expect(l.ShortURL()).To(Equal("https://go.example/Summer_Sale"))
}

func TestLinkNamePrefix(t *testing.T) {
	for key, want := range map[string]string{
		"Summer_Sale":                  "summer-sale-",
		"docs":                         "docs-",
		"--":                           "link-",
		"__x__":                        "x-",
		strings.Repeat("a", 64):        strings.Repeat("a", 40) + "-",
		strings.Repeat("a", 39) + "_b": strings.Repeat("a", 39) + "-",
	} {
		NewWithT(t).Expect(LinkNamePrefix(key)).To(Equal(want), key)
	}
}
