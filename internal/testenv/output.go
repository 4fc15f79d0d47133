package testenv

import (
	"bytes"
	"strings"
	"sync"
)

// Output collects a child process's stdout and stderr (exec's copiers
// write it) while a test reads it.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// Tail is the last n lines, for failure messages.
func (o *Output) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(o.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
