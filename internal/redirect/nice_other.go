//go:build !linux

package redirect

// lowerThreadPriority does nothing where threads have no priority of their
// own to set; the check slots still bound the CPU password checks take.
func lowerThreadPriority() {}
