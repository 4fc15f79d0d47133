package v1alpha1

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestLinkShortURL(t *testing.T) {
	g := NewWithT(t)
	l := &Link{Spec: LinkSpec{Domain: "go.example", Key: "Summer_Sale"}}
	g.Expect(l.ShortURL()).To(Equal("https://go.example/Summer_Sale"))
}
