package routing

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
)

func TestAssign(t *testing.T) {
	slots := func(prefix string, n int, parent string) []RouteSlot {
		out := make([]RouteSlot, n)
		for i := range out {
			out[i] = RouteSlot{Name: fmt.Sprintf("%s%03d", prefix, i), Host: fmt.Sprintf("%s%03d.example.com", prefix, i), Parent: parent}
		}
		return out
	}
	hosts := func(rs []RouteSlot) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.Host
		}
		return out
	}

	t.Run("new routes fill kurz-0, then kurz-1", func(t *testing.T) {
		g := NewWithT(t)
		p := Assign(slots("a", 5, ""), nil, nil, 3)
		g.Expect(p.Parents).To(Equal(map[string][]string{
			"kurz-0": {"a000.example.com", "a001.example.com", "a002.example.com"},
			"kurz-1": {"a003.example.com", "a004.example.com"},
		}))
		g.Expect(p.Routes).To(HaveKeyWithValue("a004", "kurz-1"))
		g.Expect(p.Delete).To(BeEmpty())
	})

	t.Run("a hostname keeps its parent when others come and go", func(t *testing.T) {
		g := NewWithT(t)
		// kurz-0 held a000..a002; a000 is gone, b000 arrives, a002 sits in kurz-1.
		rs := []RouteSlot{
			{Name: "a001", Host: "a001.example.com", Parent: "kurz-0"},
			{Name: "a002", Host: "a002.example.com", Parent: "kurz-1"},
			{Name: "b000", Host: "b000.example.com"},
		}
		p := Assign(rs, map[string][]string{"kurz-0": {"a000.example.com", "a001.example.com"}, "kurz-1": {"a002.example.com"}}, nil, 2)
		g.Expect(p.Routes).To(Equal(map[string]string{"a001": "kurz-0", "a002": "kurz-1", "b000": "kurz-0"}))
		g.Expect(p.Parents["kurz-1"]).To(Equal([]string{"a002.example.com"}))
	})

	t.Run("empty parents are deleted", func(t *testing.T) {
		g := NewWithT(t)
		p := Assign(slots("a", 1, "kurz-1"), map[string][]string{"kurz-0": {"x.example.com"}, "kurz-1": nil}, nil, 3)
		g.Expect(p.Delete).To(Equal([]string{"kurz-0"}))
		g.Expect(p.Parents).To(HaveKey("kurz-1"))
	})

	t.Run("a name kurz does not own is skipped", func(t *testing.T) {
		g := NewWithT(t)
		rs := append(slots("a", 1, "kurz-0"), slots("b", 1, "")...)
		p := Assign(rs, nil, []string{"kurz-0"}, 3)
		g.Expect(p.Routes).To(Equal(map[string]string{"a000": "kurz-1", "b000": "kurz-1"}))
		g.Expect(p.Parents).NotTo(HaveKey("kurz-0"))
	})

	t.Run("one listener per hostname; the assigned route keeps it", func(t *testing.T) {
		g := NewWithT(t)
		rs := []RouteSlot{{Name: "a", Host: "go.example.com"}, {Name: "b", Host: "go.example.com", Parent: "kurz-0"}}
		p := Assign(rs, nil, nil, 3)
		g.Expect(p.Routes).To(Equal(map[string]string{"a": "", "b": "kurz-0"}))
		g.Expect(p.Parents).To(Equal(map[string][]string{"kurz-0": {"go.example.com"}}))
	})

	t.Run("over capacity: listed hostnames stay, the rest move", func(t *testing.T) {
		g := NewWithT(t)
		rs := slots("a", 4, "kurz-0")
		p := Assign(rs, map[string][]string{"kurz-0": hosts(rs[1:])}, nil, 3)
		g.Expect(p.Parents["kurz-0"]).To(Equal(hosts(rs[1:])))
		g.Expect(p.Routes).To(HaveKeyWithValue("a000", "kurz-1"))
	})

	t.Run("more than 64 hostnames", func(t *testing.T) {
		g := NewWithT(t)
		p := Assign(slots("a", 70, ""), nil, nil, MaxListeners-1)
		g.Expect(p.Parents["kurz-0"]).To(HaveLen(63))
		g.Expect(p.Parents["kurz-1"]).To(HaveLen(7))
		p = Assign(slots("a", 70, ""), nil, nil, MaxListeners)
		g.Expect(p.Parents["kurz-0"]).To(HaveLen(64))
		g.Expect(p.Parents["kurz-1"]).To(HaveLen(6))
	})

	t.Run("parents ordered by index", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(compareParents("kurz-2", "kurz-10")).To(BeNumerically("<", 0))
		g.Expect(compareParents("kurz-10", "other")).To(BeNumerically("<", 0))
	})
}
