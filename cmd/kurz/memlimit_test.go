package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSoftMemoryLimitKeepsAReserve(t *testing.T) {
	const mib = 1 << 20
	for _, tt := range []struct{ limit, want int64 }{
		{300_000_000, 300_000_000 - 64*mib}, // the reserve's minimum
		{1 << 30, (1 << 30) - (1<<30)/10},   // a tenth
		{8 << 30, (8 << 30) - (8<<30)/10},
		{100 * mib, 50 * mib}, // never more than half
	} {
		if got := softMemoryLimit(tt.limit); got != tt.want {
			t.Errorf("softMemoryLimit(%d) = %d, want %d", tt.limit, got, tt.want)
		}
	}
}

func TestCgroupMemoryLimit(t *testing.T) {
	for _, tt := range []struct {
		name  string
		self  string
		files map[string]string
		want  int64
		ok    bool
	}{
		{"v2 in a cgroup namespace", "0::/\n", map[string]string{"memory.max": "536870912\n"}, 536870912, true},
		{"v2 at its own path", "0::/kubepods/pod1/c1\n",
			map[string]string{"kubepods/pod1/c1/memory.max": "300000000\n", "memory.max": "max\n"}, 300000000, true},
		{"v2 unlimited", "0::/\n", map[string]string{"memory.max": "max\n"}, 0, false},
		{"v1 at its own path", "12:cpu,cpuacct:/x\n4:memory:/kubepods/c1\n",
			map[string]string{"memory/kubepods/c1/memory.limit_in_bytes": "300000000\n"}, 300000000, true},
		{"v1 mounted at the root (a container)", "4:memory:/kubepods/c1\n",
			map[string]string{"memory/memory.limit_in_bytes": "268435456\n"}, 268435456, true},
		{"v1 unlimited", "4:memory:/\n",
			map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0, false},
		{"no memory controller", "1:cpu:/\n", nil, 0, false},
		{"nothing to read", "0::/\n", nil, 0, false},
		{"garbage", "0::/\n", map[string]string{"memory.max": "lots\n"}, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for path, content := range tt.files {
				p := filepath.Join(root, path)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := cgroupMemoryLimit(root, []byte(tt.self))
			if got != tt.want || ok != tt.ok {
				t.Errorf("cgroupMemoryLimit = %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
