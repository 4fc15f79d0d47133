//go:build !linux

package bcryptproc

import "os"

func selfExe() string {
	exe, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return exe
}

// lowerPriority does nothing where threads have no policy of their own;
// the parent's slots still bound the CPU the worker takes.
func lowerPriority() error { return nil }
