package devenv

import (
	"fmt"
	"net"
	"strconv"

	"github.com/kurz-dev/kurz/internal/freeport"
)

// portPicker hands out loopback ports for etcd and kube-apiserver that were
// free a moment ago, never one of the reserved ports (the listeners kurz
// dev's manager opens once the control plane is up, whose addresses are
// fixed before: the kernel may well hand the port of a listener that is
// not open yet to a bind of port 0, and then kube-apiserver holds the
// redirect server's port) and never one it handed out before (etcd's
// client and peer ports come from two binds in a row).
type portPicker struct {
	avoid map[int]bool
}

// pickAttempts bounds the binds a pick tries before it gives up.
const pickAttempts = 32

func newPortPicker(reserved []int) *portPicker {
	p := &portPicker{avoid: map[int]bool{}}
	for _, port := range reserved {
		p.avoid[port] = true
	}
	return p
}

// free returns a loopback port that was free a moment ago. The child may
// still lose a race for it; callers retry on "address already in use".
// freeport never repeats a port within this process; the picker adds the
// reserved ports, which freeport cannot know.
func (p *portPicker) free() (int, error) {
	for range pickAttempts {
		port, err := freeport.Port()
		if err != nil {
			return 0, fmt.Errorf("find a free port: %w", err)
		}
		if !p.avoid[port] {
			p.avoid[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("find a free port: %d binds gave only reserved ports", pickAttempts)
}

// prefer returns port when it is free on loopback and not reserved, else a
// free one. The API server keeps its port across restarts so that copies of
// the old kubeconfig keep working.
func (p *portPicker) prefer(port int) (int, error) {
	if port > 0 && !p.avoid[port] {
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			_ = l.Close()
			p.avoid[port] = true
			return port, nil
		}
	}
	return p.free()
}
