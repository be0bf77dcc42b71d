package chart

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

// helmVersion is the Helm CLI the tests build (see ../../shared/DEPENDENCIES.md).
const helmVersion = "v3.22.0"

var helmBuild struct {
	once       sync.Once
	path, skip string
}

// helmBinary returns the path of a Helm CLI built from source with
// `go install helm.sh/helm/v3/cmd/helm@v3.22.0` (through the Go module
// proxy), cached under os.UserCacheDir()/litek8s-test/helm-v3.22.0, the
// same cache test/clients uses, so that reruns start at once. The test
// skips when the CLI cannot be built.
func helmBinary(t *testing.T) string {
	t.Helper()
	helmBuild.once.Do(func() { helmBuild.path, helmBuild.skip = buildHelm(t) })
	if helmBuild.skip != "" {
		t.Skip(helmBuild.skip)
	}
	return helmBuild.path
}

func buildHelm(t *testing.T) (path, skip string) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "litek8s-test", "helm-"+helmVersion)
	bin := filepath.Join(dir, "helm")
	if helmWorks(bin) == nil {
		return bin, ""
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Sprintf("cannot build helm %s: %v", helmVersion, err)
	}
	// Build into a fresh directory next to the cache entry, then rename:
	// concurrent test binaries never see a half-written helm.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		return "", fmt.Sprintf("cannot build helm %s: %v", helmVersion, err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, goCmd, "install", "helm.sh/helm/v3/cmd/helm@"+helmVersion)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("cannot build helm %s with `go install helm.sh/helm/v3/cmd/helm@%s` (module proxy unreachable and not in the module cache?): %v\n%s",
			helmVersion, helmVersion, err, out)
	}
	t.Logf("built helm %s in %v", helmVersion, time.Since(start).Round(time.Second))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Sprintf("cannot cache helm: %v", err)
	}
	if err := os.Rename(filepath.Join(tmp, "helm"), bin); err != nil && helmWorks(bin) != nil {
		return "", fmt.Sprintf("cannot cache helm: %v", err)
	}
	if err := helmWorks(bin); err != nil {
		return "", fmt.Sprintf("helm built from %s does not run: %v", helmVersion, err)
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
	if v := strings.TrimSpace(string(out)); v != helmVersion && (v == "" || !strings.HasPrefix(helmVersion, v+".")) {
		return fmt.Errorf("%s reports version %q, want %s", bin, v, helmVersion)
	}
	return nil
}

// helmCLI runs Helm with its own HOME and Helm directories.
type helmCLI struct {
	t   *testing.T
	bin string
	env []string
}

func newHelm(t *testing.T) *helmCLI {
	t.Helper()
	bin := helmBinary(t)
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"), "HELM_CONFIG_HOME=" + filepath.Join(home, "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "data")}
	return &helmCLI{t: t, bin: bin, env: env}
}

// run runs helm and returns its standard output; stderr is in the error.
func (h *helmCLI) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(h.t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env = h.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// must is run that fails the test on an error.
func (h *helmCLI) must(args ...string) string {
	h.t.Helper()
	out, err := h.run(args...)
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// chartDir is the chart under test.
func chartDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../../charts/litek8s")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Release and namespace the tests render with.
const (
	release   = "lk"
	namespace = "litek8s"
)

// template renders chart as release lk in namespace litek8s with args
// (--set, -f) added.
func (h *helmCLI) template(chart string, args ...string) manifests {
	h.t.Helper()
	out := h.must(append([]string{"template", release, chart, "--namespace", namespace}, args...)...)
	return parseManifests(h.t, out)
}
