package devenv

import (
	"net"
	"testing"

	. "github.com/onsi/gomega"
)

// aFreePort is a loopback port nobody listens on, as far as a bind can tell.
func aFreePort(g Gomega) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	port := l.Addr().(*net.TCPAddr).Port
	g.Expect(l.Close()).To(Succeed())
	return port
}

// The control plane never takes a port kurz dev's manager will listen on,
// however free it is when the control plane starts, nor one it already
// handed out.
func TestPortPickerAvoidsReservedAndUsedPorts(t *testing.T) {
	g := NewWithT(t)
	reserved, other := aFreePort(g), aFreePort(g)
	p := newPortPicker([]int{reserved})

	seen := map[int]bool{reserved: true, other: true}
	port, err := p.prefer(reserved)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(port).NotTo(Equal(reserved), "the previous API server port is the manager's now")
	seen[port] = true

	port, err = p.prefer(other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(port).To(Equal(other), "a free, unreserved previous port is kept")
	port, err = p.prefer(other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(port).NotTo(Equal(other), "handed out once already")
	g.Expect(seen).NotTo(HaveKey(port))
	seen[port] = true

	for range 20 {
		port, err := p.free()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(seen).NotTo(HaveKey(port))
		seen[port] = true
	}
}

// A port in use is not preferred.
func TestPortPickerSkipsAPortInUse(t *testing.T) {
	g := NewWithT(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	port, err := newPortPicker(nil).prefer(busy)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(port).NotTo(Equal(busy))
}
