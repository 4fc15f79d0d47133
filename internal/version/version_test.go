package version

import (
	"runtime/debug"
	"testing"

	. "github.com/onsi/gomega"
)

func TestGet(t *testing.T) {
	built := func(version string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Version: version}, Settings: settings}, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "abc123"}

	tests := []struct {
		name          string
		version, sha  string
		read          func() (*debug.BuildInfo, bool)
		wantV, wantSH string
	}{
		{"stamped values win", "v1.2.3", "f00d", built("v0.0.0-x", rev), "v1.2.3", "f00d"},
		{"go build in a checkout", "", "", built("v0.0.0-20261123-abc123", rev), "v0.0.0-20261123-abc123", "abc123"},
		{"devel module version is not a version", "", "", built("(devel)"), "devel", "unknown"},
		{"no build info", "", "", none, "devel", "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			info := get(tt.version, tt.sha, "go1.26.8", "linux/arm64", tt.read)
			g.Expect(info.Version).To(Equal(tt.wantV))
			g.Expect(info.Commit).To(Equal(tt.wantSH))
			g.Expect(info.String()).To(Equal("kurz " + tt.wantV + " (commit " + tt.wantSH + ", go1.26.8, linux/arm64)"))
		})
	}
}
