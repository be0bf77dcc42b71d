// Package e2e runs the end-to-end scripts with real clients against real
// members started as processes.
package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestKubectl runs kubectl.sh (3 members, real kubectl) with a freshly
// built node binary.
func TestKubectl(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	if testing.Short() {
		t.Skip("starts 3 member processes")
	}
	node := filepath.Join(t.TempDir(), "node")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", node, "../../cmd/node")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build node: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(t.Context(), "bash", "kubectl.sh", node)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("kubectl.sh: %v", err)
	}
}
