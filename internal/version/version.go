package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time:
//
//	-X github.com/kurz-dev/kurz/internal/version.version=v0.1.0
//	-X github.com/kurz-dev/kurz/internal/version.commit=<sha>
var (
	version string
	commit  string
)

// Info describes the running binary.
type Info struct {
	Version   string
	Commit    string
	GoVersion string
	Platform  string
}

// Get returns the build's Info. Stamped values win; a binary built without
// them reports the module version and VCS revision Go embedded, and "devel" or
// "unknown" when there is neither.
func Get() Info {
	return get(version, commit, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH, readBuildInfo)
}

func readBuildInfo() (*debug.BuildInfo, bool) { return debug.ReadBuildInfo() }

func get(v, c, goVersion, platform string, read func() (*debug.BuildInfo, bool)) Info {
	info := Info{Version: v, Commit: c, GoVersion: goVersion, Platform: platform}
	if bi, ok := read(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && info.Commit == "" {
				info.Commit = s.Value
			}
		}
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	return info
}

// String is what `kurz version` prints.
func (i Info) String() string {
	return fmt.Sprintf("kurz %s (commit %s, %s, %s)", i.Version, i.Commit, i.GoVersion, i.Platform)
}
