package realcluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	// DefaultStateDir is where up.sh keeps the cluster unless
	// REALCLUSTER_DIR says otherwise.
	DefaultStateDir = "/var/lib/litek8s-realcluster"
	// DefaultCache is the build cache unless LITEK8S_CACHE says otherwise.
	DefaultCache = "/var/cache/litek8s"
	// K8sVersion is the Kubernetes release the harness runs.
	K8sVersion = "v1.37.2"
	// lockPath serialises clusters across test binaries and the scripts
	// (lib.sh's LOCK).
	lockPath = "/run/litek8s-realcluster.lock"
	// upTimeout covers a cold build (~25 min) plus the start.
	upTimeout = 45 * time.Minute
)

// Mode says what serves the cluster's API.
type Mode string

const (
	// Kube is etcd, kube-apiserver, kube-controller-manager and
	// kube-scheduler (up.sh).
	Kube Mode = "kube"
	// Litek8s is three litek8s members built from this checkout (up.sh
	// --litek8s).
	Litek8s Mode = "litek8s"
)

// Cluster is a running realcluster.
type Cluster struct {
	// Mode is what serves the API.
	Mode Mode
	// StateDir holds the cluster's state, logs and env file.
	StateDir string
	// Kubeconfig is the admin (system:masters) kubeconfig.
	Kubeconfig string
	// BinDir holds kubectl, crictl and the other built binaries.
	BinDir string
	// Env is the parsed $StateDir/env (KUBECONFIG, CONTAINERD_ADDRESS,
	// NODE_NAME, APISERVER_URL, ... see README.md).
	Env map[string]string
	// Members are the litek8s members' API URLs (Litek8s mode; Kubeconfig
	// names the first), and MemberKubeconfigs an admin kubeconfig for
	// each, in the same order.
	Members, MemberKubeconfigs []string

	dir      string // the directory of up.sh and down.sh
	simNodes int    // simulated nodes the members run (SimulatedNodes)
}

// Up returns the running cluster, bringing it up with up.sh unless one is
// already up in the state dir (REALCLUSTER_DIR or DefaultStateDir). When Up
// started it, t.Cleanup runs down.sh (unless REALCLUSTER_KEEP=1) and fails
// the test if Leftovers finds anything afterwards. It skips
// the test when not root or, unless CI=true, when the binaries are not
// built yet or -short is set; with CI=true those fail the test instead.
func Up(t testing.TB) *Cluster {
	t.Helper()
	return up(t, Kube)
}

// UpLitek8s is Up with three litek8s members, built from this checkout
// (or the binary LITEK8S_NODE_BIN names), serving the API in place of
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler; the
// kubelet, kube-proxy, CoreDNS and the provisioner are the same. Unlike
// Up it does not wait for the node or CoreDNS to become Ready (up.sh
// --litek8s returns once every member is ready and the node components
// run): that is the test's to check. A cluster of the other mode that is
// up is torn down first.
func UpLitek8s(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	return up(t, Litek8s, opts...)
}

// Option changes what UpLitek8s starts.
type Option func(*Cluster)

// SimulatedNodes has the litek8s members run n simulated nodes
// (sim-node-0, ...) beside the real one, tainted SimulatedNodeTaint
// (up.sh's REALCLUSTER_SIMULATED_NODES): only pods that tolerate it run
// there. A running cluster is reused only if it has the same number.
func SimulatedNodes(n int) Option { return func(c *Cluster) { c.simNodes = n } }

// SimulatedNodeTaint is the NoSchedule taint (value "true") of the
// simulated nodes SimulatedNodes starts.
const SimulatedNodeTaint = "litek8s.io/simulated"

func up(t testing.TB, mode Mode, opts ...Option) *Cluster {
	t.Helper()
	c := &Cluster{
		Mode:     mode,
		StateDir: envOr("REALCLUSTER_DIR", DefaultStateDir),
		BinDir:   filepath.Join(envOr("LITEK8S_CACHE", DefaultCache), "k8s-"+K8sVersion, "bin"),
		dir:      scriptDir(),
	}
	for _, o := range opts {
		o(c)
	}
	c.Kubeconfig = filepath.Join(c.StateDir, "kubeconfig")
	if msg := c.missing(); msg != "" {
		if os.Getenv("CI") == "true" && os.Geteuid() == 0 {
			t.Logf("realcluster: %s; CI=true, up.sh builds them", msg)
		} else if os.Getenv("CI") == "true" {
			t.Fatalf("realcluster: %s", msg)
		} else {
			t.Skipf("realcluster: %s (run %s/build.sh, or set CI=true)", msg, c.dir)
		}
	}
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("realcluster: skipped with -short")
	}
	unlock, err := lock(t)
	if err != nil {
		t.Fatalf("realcluster: %v", err)
	}
	if c.healthy() {
		t.Logf("realcluster: reusing the cluster in %s", c.StateDir)
		t.Cleanup(unlock)
		return c
	}
	t.Cleanup(func() {
		defer unlock()
		if os.Getenv("REALCLUSTER_KEEP") == "1" {
			t.Logf("realcluster: REALCLUSTER_KEEP=1, leaving the cluster up in %s", c.StateDir)
			return
		}
		if err := c.down(); err != nil {
			t.Errorf("realcluster: %v", err)
		} else if left := Leftovers(c.StateDir); len(left) != 0 {
			t.Errorf("realcluster: down.sh left:\n%s", strings.Join(left, "\n"))
		}
	})
	start := time.Now()
	var args []string
	if mode == Litek8s {
		args = append(args, "--litek8s")
	}
	out, err := c.run(upTimeout, "up.sh", args...)
	if err != nil {
		t.Fatalf("realcluster: up.sh: %v\n%s", err, out)
	}
	t.Logf("realcluster: up in %s:\n%s", time.Since(start).Round(time.Second), out)
	if err := c.loadEnv(); err != nil {
		t.Fatalf("realcluster: %v", err)
	}
	return c
}

// Down runs down.sh now (the cleanup Up registered then finds nothing to do).
func (c *Cluster) Down(t testing.TB) {
	t.Helper()
	out, err := c.run(5*time.Minute, "down.sh")
	if err != nil {
		t.Fatalf("realcluster: down.sh: %v\n%s", err, out)
	}
	t.Logf("realcluster: down.sh:\n%s", out)
}

// LoadImage imports an image archive (docker-archive or OCI, e.g. from
// `podman save`) into the cluster's containerd, namespace k8s.io.
func (c *Cluster) LoadImage(t testing.TB, archive string) {
	t.Helper()
	if out, err := c.run(10*time.Minute, "load-image.sh", archive); err != nil {
		t.Fatalf("realcluster: load-image.sh %s: %v\n%s", archive, err, out)
	}
}

// Kubectl is the path of the kubectl built with the cluster.
func (c *Cluster) Kubectl() string { return filepath.Join(c.BinDir, "kubectl") }

// LogFile is the path of a component's log (kubelet, kube-proxy,
// containerd, litek8s-0, kube-apiserver, ...).
func (c *Cluster) LogFile(component string) string {
	return filepath.Join(c.StateDir, "logs", component+".log")
}

// PIDFile is the path of a component's pid file; its mtime is when the
// component was started.
func (c *Cluster) PIDFile(component string) string {
	return filepath.Join(c.StateDir, "pids", component+".pid")
}

// StopComponent stops a component up.sh started (SIGTERM, then SIGKILL
// after 10 s; kill: SIGKILL at once) and waits until it is gone
// (component.sh stop|kill). StartComponent starts it again with the same
// command line, appending to its log. Down cleans up either way.
func (c *Cluster) StopComponent(t testing.TB, name string, kill bool) {
	t.Helper()
	op := "stop"
	if kill {
		op = "kill"
	}
	c.component(t, op, name)
}

// StartComponent: see StopComponent.
func (c *Cluster) StartComponent(t testing.TB, name string) {
	t.Helper()
	c.component(t, "start", name)
}

func (c *Cluster) component(t testing.TB, op, name string) {
	t.Helper()
	out, err := c.run(time.Minute, "component.sh", op, name)
	if err != nil {
		t.Fatalf("realcluster: component.sh %s %s: %v\n%s", op, name, err, out)
	}
	t.Logf("realcluster: component.sh %s %s: %s", op, name, strings.TrimSpace(out))
}

func (c *Cluster) down() error {
	if out, err := c.run(5*time.Minute, "down.sh"); err != nil {
		return fmt.Errorf("down.sh: %w\n%s", err, out)
	}
	return nil
}

// missing says which prerequisite is absent, or "".
func (c *Cluster) missing() string {
	if os.Geteuid() != 0 {
		return "needs root"
	}
	bins := []string{"kubelet", "kube-proxy", "kubectl", "coredns", "crictl"}
	if c.Mode == Kube {
		bins = append(bins, "kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd")
	}
	for _, b := range bins {
		if _, err := os.Stat(filepath.Join(c.BinDir, b)); err != nil {
			return fmt.Sprintf("%s not built in %s", b, c.BinDir)
		}
	}
	if c.Mode == Litek8s && os.Getenv("LITEK8S_NODE_BIN") == "" {
		if _, err := exec.LookPath("go"); err != nil {
			return "no go on PATH to build the litek8s node (or set LITEK8S_NODE_BIN)"
		}
	}
	return ""
}

// healthy reports whether an earlier up.sh of c's mode finished in
// StateDir and its apiserver still answers /readyz.
func (c *Cluster) healthy() bool {
	if err := c.loadEnv(); err != nil {
		return false
	}
	if m := Mode(c.Env["MODE"]); m != c.Mode && (m != "" || c.Mode != Kube) {
		return false // up.sh runs down.sh first
	}
	if n := c.Env["SIMULATED_NODES"]; n != strconv.Itoa(c.simNodes) && (n != "" || c.simNodes != 0) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Kubectl(), "--kubeconfig", c.Kubeconfig, "get", "--raw", "/readyz")
	return cmd.Run() == nil
}

// run runs a script of the harness with REALCLUSTER_DIR set and returns its
// combined output.
func (c *Cluster) run(timeout time.Duration, script string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.dir, script), args...)
	// The caller holds the lock (see Up); the scripts must not wait for it.
	cmd.Env = append(os.Environ(), "REALCLUSTER_DIR="+c.StateDir, "REALCLUSTER_LOCK_HELD=1",
		"REALCLUSTER_SIMULATED_NODES="+strconv.Itoa(c.simNodes), "REALCLUSTER_SIMULATED_NODE_TAINTS="+SimulatedNodeTaint+"=true:NoSchedule")
	// The script's own children (the cluster) are in their own sessions
	// and write to files; only the script holds the pipe.
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (c *Cluster) loadEnv() error {
	f, err := os.Open(filepath.Join(c.StateDir, "env"))
	if err != nil {
		return err
	}
	defer f.Close()
	env, err := parseEnv(f)
	if err != nil {
		return fmt.Errorf("%s/env: %w", c.StateDir, err)
	}
	c.Env = env
	if k := env["KUBECONFIG"]; k != "" {
		c.Kubeconfig = k
	}
	if b := env["REALCLUSTER_BIN"]; b != "" {
		c.BinDir = b
	}
	c.Members, c.MemberKubeconfigs = nil, nil
	if u := env["LITEK8S_URLS"]; u != "" {
		c.Members = strings.Split(u, ",")
		for i := range c.Members {
			c.MemberKubeconfigs = append(c.MemberKubeconfigs,
				filepath.Join(c.StateDir, "litek8s", fmt.Sprintf("m%d.kubeconfig", i)))
		}
	}
	return nil
}

// parseEnv reads the `export K=V` lines up.sh writes (V quoted with
// printf %q; the values it writes need no unquoting beyond backslashes
// and the two single quotes of an empty value).
func parseEnv(f *os.File) (map[string]string, error) {
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export ")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("bad line %q", line)
		}
		if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
			v = v[1 : len(v)-1] // printf %q of "" (and of some strings) is '...'
		} else {
			v = strings.ReplaceAll(v, `\`, "")
		}
		env[k] = v
	}
	return env, sc.Err()
}

// lock takes the machine-wide realcluster lock, waiting (and saying so)
// while another test or script holds it; the returned func releases it.
func lock(t testing.TB) (func(), error) {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		return func() { f.Close() }, nil
	}
	t.Logf("realcluster: waiting for %s (another test or up.sh/down.sh holds it)", lockPath)
	start := time.Now()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", lockPath, err)
	}
	t.Logf("realcluster: got %s after %s", lockPath, time.Since(start).Round(time.Second))
	return func() { f.Close() }, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// scriptDir is the directory of this file, where up.sh and down.sh live.
func scriptDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic(errors.New("realcluster: no caller information"))
	}
	return filepath.Dir(file)
}
