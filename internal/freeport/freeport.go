// Package freeport hands out loopback ports for servers that tests and
// benchmarks start, and for kurz dev's listeners asked for on port 0, never
// the same port twice in one process.
//
// Binding port 0 and closing gives a port that was free a moment ago, but
// the kernel readily gives the same port to the next bind to port 0: two
// calls in a row can return one port, and a process started with both as
// its metrics and health addresses fails with "address already in use".
package freeport

import (
	"fmt"
	"net"
	"sync"
)

// attempts bounds the binds one call tries before it gives up.
const attempts = 100

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// Port returns a loopback port that was free a moment ago and that no
// earlier call in this process returned.
func Port() (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for range attempts {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("find a free loopback port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("find a free loopback port: %d binds gave only ports handed out before", attempts)
}

// Addr is Port as host:port on 127.0.0.1.
func Addr() (string, error) {
	port, err := Port()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", port), nil
}
