package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// The Go runtime's soft memory limit, when the environment sets none, is
// the container's memory limit less a reserve: memReserveFraction of it, at
// least memReserveMin, never more than half.
//
// The reserve is for what the cgroup charges and the Go runtime does not
// count: the pages of kurz's own binary it runs from (48 MB resident at
// 100 000 links) and the kernel's page cache. A soft limit equal to the
// container's (GOMEMLIMIT from limits.memory, the manifests' former way)
// lets the Go runtime use all of the limit before it collects harder, by
// then the binary's pages have pushed the cgroup over it. A soft limit
// only bounds garbage, not live objects: a replica with 100 000 links
// held its start, settle and restart in a 350 MB cgroup (binary charged
// to it) and was OOM-killed as it became ready in a 300 MB one, with
// either soft limit (docs/scaling.md, "A replica's memory").
const (
	memReserveFraction = 10 // percent
	memReserveMin      = 64 << 20
)

// cgroupRoot is where the cgroup filesystems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// softMemoryLimit returns the soft memory limit for a container limit.
func softMemoryLimit(limit int64) int64 {
	reserve := max(limit*memReserveFraction/100, memReserveMin)
	return limit - min(reserve, limit/2)
}

// memoryLimit applies a soft memory limit derived from the container's,
// unless GOMEMLIMIT is set or no cgroup limit is found. It returns the
// container's limit and the soft limit applied (0, 0 when none was).
func memoryLimit() (container, soft int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, 0
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, 0
	}
	container, ok := cgroupMemoryLimit(cgroupRoot, self)
	if !ok {
		return 0, 0
	}
	soft = softMemoryLimit(container)
	debug.SetMemoryLimit(soft)
	return container, soft
}

// cgroupMemoryLimit reads the memory limit of the cgroup that self (the
// contents of /proc/self/cgroup) names, under root: cgroup v2's memory.max,
// else v1's memory.limit_in_bytes; at the cgroup's own path, or at root
// itself, which is the container's cgroup where the runtime mounts it so
// (a cgroup namespace, or Docker's v1 mounts). It reports false when there
// is no limit ("max", or v1's value for none) or nothing could be read.
func cgroupMemoryLimit(root string, self []byte) (int64, bool) {
	var candidates []string
	sc := bufio.NewScanner(bytes.NewReader(self))
	for sc.Scan() {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "": // v2
			candidates = append(candidates,
				filepath.Join(root, parts[2], "memory.max"), filepath.Join(root, "memory.max"))
		case hasController(parts[1], "memory"): // v1
			candidates = append(candidates,
				filepath.Join(root, "memory", parts[2], "memory.limit_in_bytes"),
				filepath.Join(root, "memory", "memory.limit_in_bytes"))
		}
	}
	for _, path := range candidates {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		// v1 says "no limit" with the largest page-aligned int64.
		if err != nil || n <= 0 || n >= 1<<62 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}
