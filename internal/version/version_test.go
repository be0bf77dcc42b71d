package version

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	i := Info{Version: "1.2.3", Commit: "0123456789abcdef0123", Date: "2026-12-01T00:00:00Z", GoVersion: "go1.26.8",
		Platform: "linux/amd64"}
	want := "litek8s 1.2.3 (commit 0123456789ab, built 2026-12-01T00:00:00Z, go1.26.8 linux/amd64)"
	if got := i.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := (Info{Version: "dev", GoVersion: "go1.26.8", Platform: "linux/amd64"}).String(); !strings.Contains(got,
		"commit unknown, built unknown") {
		t.Errorf("String() without commit or date = %q", got)
	}
}

func TestGetTakesStampedValues(t *testing.T) {
	defer func(v, c, d string) { Version, Commit, Date = v, c, d }(Version, Commit, Date)
	Version, Commit, Date = "9.9.9", "abc", "2026-01-02T03:04:05Z"
	if got := Get(); got.Version != "9.9.9" || got.Commit != "abc" || got.Date != "2026-01-02T03:04:05Z" || got.GoVersion == "" {
		t.Errorf("Get() = %+v", got)
	}
}
