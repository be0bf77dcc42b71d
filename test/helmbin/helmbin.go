// Package helmbin builds the Helm CLI the tests use (once per test binary,
// cached across runs), so that test/clients and test/chart run the same
// helm.
package helmbin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Version is the Helm CLI the tests build (the version the project's Go modules are tested with).
const Version = "v3.22.0"

var helmBuild struct {
	once       sync.Once
	path, skip string
}

// Binary returns the path of a Helm CLI built from source with
// `go install helm.sh/helm/v3/cmd/helm@v3.22.0` (through the Go module
// proxy), cached under os.UserCacheDir()/litek8s-test/helm-v3.22.0 so
// that reruns start at once. The test
// skips when the CLI cannot be built (fails with CI=true).
func Binary(t testing.TB) string {
	t.Helper()
	helmBuild.once.Do(func() { helmBuild.path, helmBuild.skip = buildHelm(t) })
	if helmBuild.skip != "" {
		if os.Getenv("CI") == "true" { // in CI a missing prerequisite fails
			t.Fatal(helmBuild.skip)
		}
		t.Skip(helmBuild.skip)
	}
	return helmBuild.path
}

func buildHelm(t testing.TB) (path, skip string) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "litek8s-test", "helm-"+Version)
	bin := filepath.Join(dir, "helm")
	if helmWorks(bin) == nil {
		return bin, ""
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Sprintf("cannot build helm %s: %v", Version, err)
	}
	// Build into a fresh directory next to the cache entry, then rename:
	// concurrent test binaries never see a half-written helm.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		return "", fmt.Sprintf("cannot build helm %s: %v", Version, err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, goCmd, "install", "helm.sh/helm/v3/cmd/helm@"+Version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("cannot build helm %s with `go install helm.sh/helm/v3/cmd/helm@%s` (module proxy unreachable and not in the module cache?): %v\n%s",
			Version, Version, err, out)
	}
	t.Logf("built helm %s in %v", Version, time.Since(start).Round(time.Second))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Sprintf("cannot cache helm: %v", err)
	}
	if err := os.Rename(filepath.Join(tmp, "helm"), bin); err != nil && helmWorks(bin) != nil {
		return "", fmt.Sprintf("cannot cache helm: %v", err)
	}
	if err := helmWorks(bin); err != nil {
		return "", fmt.Sprintf("helm built from %s does not run: %v", Version, err)
	}
	return bin, ""
}

// helmWorks checks that bin is the Helm we want.
func helmWorks(bin string) error {
	out, err := exec.Command(bin, "version", "--template", "{{.Version}}").Output()
	if err != nil {
		return err
	}
	// A `go install`ed helm reports its major.minor (the release process
	// stamps the patch level with -ldflags).
	if v := strings.TrimSpace(string(out)); v != Version && (v == "" || !strings.HasPrefix(Version, v+".")) {
		return fmt.Errorf("%s reports version %q, want %s", bin, v, Version)
	}
	return nil
}
