package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time with -ldflags -X; see the package comment.
var (
	Version = "dev"
	Commit  = ""
	Date    = ""
)

// Info is the stamped version of this binary.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns this binary's version. A binary built without -X takes the
// commit Go's build info recorded (vcs.revision), when there is one.
func Get() Info {
	i := Info{Version: Version, Commit: Commit, Date: Date, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if i.Commit != "" {
		return i
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Commit = s.Value
			case "vcs.time":
				if i.Date == "" {
					i.Date = s.Value
				}
			}
		}
	}
	return i
}

// String is the one line `node --version` and `ctl version` print, e.g.
// "litek8s 0.1.0 (commit 1a2b3c4, built 2026-12-01T10:00:00Z, go1.26.8 linux/amd64)".
func (i Info) String() string {
	commit := i.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if commit == "" {
		commit = "unknown"
	}
	date := i.Date
	if date == "" {
		date = "unknown"
	}
	return fmt.Sprintf("litek8s %s (commit %s, built %s, %s %s)", i.Version, commit, date, i.GoVersion, i.Platform)
}
