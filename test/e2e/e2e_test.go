// Package e2e runs the end-to-end scripts with real clients against real
// members started as processes.
package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestKubectl runs kubectl.sh (3 members, real kubectl) with a freshly
// built node binary.
func TestKubectl(t *testing.T) {
	runScript(t, "kubectl.sh")
}

// TestKubectlSuite runs kubectl_suite.sh: at least 60 kubectl invocations
// spread over 3 members, each checking its output against what kubectl 1.32
// prints against kube-apiserver (issue 3, acceptance 1 and 5). It runs
// strict: the first failing check fails the test (SUITE_KEEP_GOING is
// cleared).
//
// To see every failing check at once:
//
//	SUITE_KEEP_GOING=1 bash test/e2e/kubectl_suite.sh
func TestKubectlSuite(t *testing.T) {
	runScript(t, "kubectl_suite.sh", "SUITE_KEEP_GOING")
}

// TestWorkloads runs workloads.sh (issue 5, acceptance 1): real kubectl
// against 3 members started with --simulated-nodes 3: a Deployment's
// rollout, scale, set image, history and undo, cascading deletion, Jobs,
// a Service's EndpointSlices and Endpoints, namespace deletion and the
// simulated Nodes.
func TestWorkloads(t *testing.T) {
	runScript(t, "workloads.sh")
}

// runScript builds the node binary and runs script with it (the script
// starts 3 member processes and drives them with real kubectl), with the
// environment variables named in unset removed and TMPDIR a test
// directory. It skips without kubectl and under -short.
func runScript(t *testing.T, script string, unset ...string) {
	t.Helper()
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
	cmd := exec.CommandContext(t.Context(), "bash", script, node)
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains(unset, name) {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
}
