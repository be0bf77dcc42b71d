package chart

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/test/helmbin"
)

// helmBinary is the Helm CLI test/clients uses too.
func helmBinary(t *testing.T) string { return helmbin.Binary(t) }

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
