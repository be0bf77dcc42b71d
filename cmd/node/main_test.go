package main

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/litek8s/litek8s/internal/api"
)

// Flags win over LITEK8S_* environment variables, which win over the
// config file; unset values keep the defaults.
func TestConfigPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "node.yaml")
	if err := os.WriteFile(file, []byte("id: from-file\ndata-dir: /file/dir\napi-addr: 127.0.0.1:1111\nfeed-size: 42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LITEK8S_DATA_DIR", "/env/dir")
	t.Setenv("LITEK8S_API_ADDR", "127.0.0.1:2222")
	v, err := loadConfig([]string{"--config", file, "--api-addr", "127.0.0.1:3333"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := memberConfig(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"id (file)", cfg.ID, "from-file"},
		{"data dir (env over file)", cfg.DataDir, "/env/dir"},
		{"api addr (flag over env)", cfg.APIAddr, "127.0.0.1:3333"},
		{"raft addr (default)", cfg.Store.RaftAddr, "127.0.0.1:7000"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
	if cfg.Store.FeedSize != 42 {
		t.Errorf("feed size from file: got %d", cfg.Store.FeedSize)
	}
}

func TestConfigRejectsJoinWithoutToken(t *testing.T) {
	v, err := loadConfig([]string{"--join", "https://127.0.0.1:6443"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := memberConfig(v); err == nil {
		t.Fatal("joining without a token was accepted")
	}
}

func TestDefaultsWithNoFlags(t *testing.T) {
	v, err := loadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := memberConfig(v)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != "data" || cfg.APIAddr != "127.0.0.1:6443" || cfg.Join != "" {
		t.Fatalf("defaults: %+v", cfg)
	}
}

// --simulated-nodes and LITEK8S_SIMULATED_NODES set the simulated node
// count.
func TestSimulatedNodesFlag(t *testing.T) {
	for _, c := range []struct {
		name, env string
		args      []string
		want      int
	}{
		{"default", "", nil, 0},
		{"env", "7", nil, 7},
		{"flag over env", "7", []string{"--simulated-nodes", "100"}, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("LITEK8S_SIMULATED_NODES", c.env)
			}
			v, err := loadConfig(c.args)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := memberConfig(v)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Controllers.Scheduling.SimNodes.Count; got != c.want {
				t.Errorf("simulated nodes %d, want %d", got, c.want)
			}
		})
	}
	v, err := loadConfig([]string{"--simulated-nodes", "-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := memberConfig(v); err == nil {
		t.Error("--simulated-nodes -1 was accepted")
	}
}

// --simulated-node-taints and LITEK8S_SIMULATED_NODE_TAINTS set the
// simulated nodes' taints; a malformed one is refused with the reason.
func TestSimulatedNodeTaintsFlag(t *testing.T) {
	simulated := corev1.Taint{Key: "litek8s.io/simulated", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	for _, c := range []struct {
		name, env string
		args      []string
		want      []corev1.Taint
	}{
		{"default", "", nil, nil},
		{"env", "litek8s.io/simulated=true:NoSchedule", []string{"--simulated-nodes", "1"}, []corev1.Taint{simulated}},
		{"flag over env", "x:NoExecute", []string{"--simulated-node-taints", "litek8s.io/simulated=true:NoSchedule,gpu:NoExecute"},
			[]corev1.Taint{simulated, {Key: "gpu", Effect: corev1.TaintEffectNoExecute}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("LITEK8S_SIMULATED_NODE_TAINTS", c.env)
			}
			v, err := loadConfig(c.args)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := memberConfig(v)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Controllers.Scheduling.SimNodes.Taints; !reflect.DeepEqual(got, c.want) {
				t.Errorf("taints %+v, want %+v", got, c.want)
			}
		})
	}
	for _, bad := range []string{"litek8s.io/simulated=true", "a=b:Always", "bad key:NoSchedule"} {
		v, err := loadConfig([]string{"--simulated-nodes", "1", "--simulated-node-taints", bad})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := memberConfig(v); err == nil || !strings.Contains(err.Error(), "simulated-node-taints") {
			t.Errorf("--simulated-node-taints %q: %v, want an error naming the flag", bad, err)
		}
	}
}

// The request limits default to kube's and take flags (kube's names).
func TestLimitFlags(t *testing.T) {
	v, err := loadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := memberConfig(v)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Limits != api.DefaultLimits() {
		t.Errorf("defaults: %+v, want %+v", cfg.Limits, api.DefaultLimits())
	}
	v, err = loadConfig([]string{"--max-requests-inflight", "7", "--max-mutating-requests-inflight", "3",
		"--max-watches-inflight", "0", "--request-timeout", "5s", "--min-request-timeout", "10m", "--max-object-size-bytes", "4096"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = memberConfig(v); err != nil {
		t.Fatal(err)
	}
	l := cfg.Limits
	if l.MaxRequestsInflight != 7 || l.MaxMutatingRequestsInflight != 3 || l.MaxWatchesInflight != 0 ||
		l.RequestTimeout != 5*time.Second || l.MinRequestTimeout != 10*time.Minute || l.MaxObjectBytes != 4096 {
		t.Errorf("from flags: %+v", l)
	}
	if v, err = loadConfig([]string{"--request-timeout", "0s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := memberConfig(v); err == nil {
		t.Error("a zero request timeout was accepted")
	}
}

// --version stops before any configuration is read; the CA files are
// read, and a missing one is named.
func TestVersionAndCAFlags(t *testing.T) {
	if _, err := loadConfig([]string{"--version", "--config", "/does/not/exist"}); !errors.Is(err, errVersion) {
		t.Fatalf("--version: %v", err)
	}
	v, err := loadConfig([]string{"--ca-cert-file", "/does/not/exist.crt", "--ca-key-file", "/does/not/exist.key"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := memberConfig(v); err == nil || !strings.Contains(err.Error(), "ca-cert-file") {
		t.Fatalf("a missing CA file: %v", err)
	}
}

// --dead-member-timeout and --min-quorum reach the store's configuration;
// bad values are refused with the setting named.
func TestDeadMemberFlags(t *testing.T) {
	v, err := loadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := memberConfig(v)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store.DeadMemberTimeout != 0 || cfg.Store.MinQuorum != 3 {
		t.Errorf("defaults: timeout %s, min quorum %d; want 0 (off) and 3", cfg.Store.DeadMemberTimeout, cfg.Store.MinQuorum)
	}
	if v, err = loadConfig([]string{"--dead-member-timeout", "90s", "--min-quorum", "5"}); err != nil {
		t.Fatal(err)
	}
	if cfg, err = memberConfig(v); err != nil {
		t.Fatal(err)
	}
	if cfg.Store.DeadMemberTimeout != 90*time.Second || cfg.Store.MinQuorum != 5 {
		t.Errorf("from flags: timeout %s, min quorum %d", cfg.Store.DeadMemberTimeout, cfg.Store.MinQuorum)
	}
	for _, tc := range []struct{ flag, value, want string }{
		{"--dead-member-timeout", "-1m", "dead-member timeout"},
		{"--dead-member-timeout", "10ms", "dead-member timeout"},
		{"--min-quorum", "0", "min quorum"},
	} {
		if v, err = loadConfig([]string{tc.flag, tc.value}); err != nil {
			t.Fatal(err)
		}
		if _, err := memberConfig(v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want an error naming the %s", tc.flag, tc.value, err, tc.want)
		}
	}
}
