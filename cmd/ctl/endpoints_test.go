package main

import (
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/member/membertest"
	"github.com/litek8s/litek8s/internal/version"
)

// deadURL is an https URL on a port nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "https://" + addr
}

// twoContexts writes a kubeconfig whose current context names a dead
// server and whose context "good" is the one of kc.
func twoContexts(t *testing.T, kc, dead string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	good := cfg.Contexts[cfg.CurrentContext]
	cl := *cfg.Clusters[good.Cluster]
	cl.Server = dead
	cfg.Clusters["dead"] = &cl
	dc := *good
	dc.Cluster = "dead"
	cfg.Contexts["dead"], cfg.Contexts["good"] = &dc, good
	delete(cfg.Contexts, cfg.CurrentContext)
	cfg.CurrentContext = "dead"
	file := filepath.Join(t.TempDir(), "two-contexts")
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		t.Fatal(err)
	}
	return file
}

// How ctl finds the cluster: $KUBECONFIG, --context, --endpoints with a
// dead first one, the members it remembers when the kubeconfig's member
// is down, and what it says of a member that is down or of a cluster
// without a leader. Every command prints JSON and YAML.
func TestCtlFindsCluster(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("LITEK8S_CACHE_DIR", cache)
	c := membertest.StartCluster(t, 3)
	ctx := t.Context()
	leader := c.WaitLeader()
	kc := c.Kubeconfig(leader)
	members := func(t *testing.T, args ...string) adminapi.MemberList {
		t.Helper()
		var l adminapi.MemberList
		ctlJSON(t, &l, append([]string{"members", "list"}, args...)...)
		if len(l.Members) != 3 {
			t.Fatalf("ctl members list %v: %+v", args, l)
		}
		return l
	}

	t.Run("KUBECONFIG list", func(t *testing.T) {
		t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing")+string(filepath.ListSeparator)+kc)
		members(t)
		code, out := ctlProcess(t, []string{"LITEK8S_OUTPUT=json"}, "members", "list")
		if code != 0 || !strings.Contains(out, c.URL(leader)) {
			t.Fatalf("ctl members list with $KUBECONFIG: exit %d\n%s", code, out)
		}
	})

	t.Run("context", func(t *testing.T) {
		file := twoContexts(t, kc, deadURL(t))
		members(t, "--kubeconfig", file, "--context", "good", "--cache-dir", "")
		_, stderr, err := ctl(ctx, "members", "list", "--kubeconfig", file, "--cache-dir", "")
		if exitCode(err) != exitUnreachable || !strings.Contains(stderr, "cannot reach the member") {
			t.Fatalf("current context names a dead member: exit %d %v", exitCode(err), err)
		}
		_, _, err = ctl(ctx, "members", "list", "--kubeconfig", file, "--context", "nope")
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), `context "nope" does not exist`) {
			t.Fatalf("unknown context: exit %d %v", exitCode(err), err)
		}
	})

	t.Run("endpoints fail over", func(t *testing.T) {
		f := c.Follower()
		eps := deadURL(t) + "," + c.URL(f)
		members(t, "--kubeconfig", kc, "--endpoints", eps, "--cache-dir", "")
		env := []string{"LITEK8S_ENDPOINTS=" + eps, "LITEK8S_TOKEN=" + c.Token(),
			"LITEK8S_CERTIFICATE_AUTHORITY=" + filepath.Join(filepath.Dir(kc), "tls", "ca.crt"),
			"LITEK8S_KUBECONFIG=" + filepath.Join(t.TempDir(), "none"), "LITEK8S_CACHE_DIR="}
		membertest.Eventually(t, 10*time.Second, func() error { // a follower is ready once the leader says so
			code, out := ctlProcess(t, env, "health", "-o", "json")
			var h HealthOutput
			if code != 0 || json.Unmarshal([]byte(out), &h) != nil || !h.Ready || h.Member != c.URL(f) {
				return fmt.Errorf("health through --endpoints: exit %d\n%s", code, out)
			}
			return nil
		})
		_, stderr, err := ctl(ctx, "status", "--kubeconfig", kc, "--endpoints", deadURL(t)+","+deadURL(t),
			"--cache-dir", "")
		if exitCode(err) != exitUnreachable || !strings.Contains(stderr, "no member answered") {
			t.Fatalf("every endpoint dead: exit %d %v", exitCode(err), err)
		}
	})

	t.Run("every command prints json and yaml", func(t *testing.T) {
		backup := filepath.Join(t.TempDir(), "backup.db")
		for _, args := range [][]string{
			{"status"}, {"members", "list"}, {"version"}, {"version", "--client"}, {"health"}, {"certs", "list"},
			{"certs", "list", "--all"}, {"kubeconfig", "--ttl", "1h"},
			{"leader", "transfer", "--to", fmt.Sprintf("m%d", leader)}, {"snapshot", "save", backup},
			{"snapshot", "inspect", backup},
		} {
			for _, format := range []string{outputJSON, outputYAML} {
				// retried: on a loaded machine an election may come between
				membertest.Eventually(t, 10*time.Second, func() error {
					out, stderr, err := ctl(ctx, append(args, "-o", format, "--kubeconfig", kc)...)
					var v map[string]any
					var perr error
					if format == outputJSON {
						perr = json.Unmarshal([]byte(out), &v)
					} else {
						perr = yaml.Unmarshal([]byte(out), &v)
					}
					if err != nil || perr != nil || len(v) == 0 {
						return fmt.Errorf("ctl %v -o %s: %v %v\n%s%s", args, format, err, perr, out, stderr)
					}
					return nil
				})
			}
		}
		for _, format := range []string{outputJSON, outputYAML} { // a list, not an object
			out, _, err := ctl(ctx, "token", "list", "-o", format, "--kubeconfig", kc)
			var recs []map[string]any
			if err != nil || yaml.Unmarshal([]byte(out), &recs) != nil || len(recs) == 0 || recs[0]["id"] == nil {
				t.Errorf("token list -o %s: %v\n%s", format, err, out)
			}
		}
	})

	t.Run("version of every member", func(t *testing.T) {
		var v VersionOutput
		ctlJSON(t, &v, "version", "--kubeconfig", kc)
		if v.Client != version.Get() || len(v.Members) != 3 {
			t.Fatalf("version: %+v", v)
		}
		for _, m := range v.Members {
			if m.Build == nil || *m.Build != version.Get() || m.Version != version.Get().Version || m.Error != "" {
				t.Errorf("member %s: %+v", m.ID, m)
			}
		}
	})

	// The kubeconfig names a follower that dies: status answers from the
	// members ctl remembers, marks the dead one and exits 3.
	down := c.Follower()
	downID, downKC := fmt.Sprintf("m%d", down), c.Kubeconfig(down)
	members(t, "--kubeconfig", downKC) // remembers the members
	c.Stop(down)
	t.Run("status with the kubeconfig's member down", func(t *testing.T) {
		start := time.Now()
		code, out := ctlProcess(t, []string{"KUBECONFIG=" + downKC, "LITEK8S_CACHE_DIR=" + cache},
			"status", "--timeout", "3s")
		took := time.Since(start)
		if code != exitUnreachable || !strings.Contains(out, "1 of 3 members unreachable") ||
			!strings.Contains(out, downID+" ") || strings.Count(out, "Leader") != 1 ||
			!strings.Contains(strings.Join(strings.Fields(out), " "), downID+" "+c.URL(down)) {
			t.Fatalf("exit %d after %v\n%s", code, took, out)
		}
		if took > 3*time.Second+time.Second {
			t.Errorf("status took %v with --timeout 3s", took)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, downID+" ") && !strings.Contains(line, "unreachable") {
				t.Errorf("the dead member is not marked: %q", line)
			}
		}
		t.Logf("ctl status, m%d down:\n%s", down, out)
	})

	t.Run("resync and transfer to a dead member", func(t *testing.T) {
		for _, args := range [][]string{{"resync", downID}, {"leader", "transfer", "--to", downID}} {
			membertest.Eventually(t, 10*time.Second, func() error {
				code, out := ctlProcess(t, nil, append(args, "--kubeconfig", kc)...)
				if code != exitFailed || !strings.Contains(out, "member "+downID+" ") ||
					!strings.Contains(out, "it is down or cut off") {
					return fmt.Errorf("ctl %v: exit %d\n%s", args, code, out)
				}
				return nil
			})
		}
		if c.WaitLeader() != leader {
			t.Fatalf("leadership moved")
		}
		code, out := ctlProcess(t, nil, "members", "remove", fmt.Sprintf("m%d", leader), "--kubeconfig", kc)
		if code != exitFailed || !strings.Contains(out, "transfer leadership first") {
			t.Fatalf("remove the leader: exit %d\n%s", code, out)
		}
	})

	t.Run("no leader: each member's own view", func(t *testing.T) {
		other := 3 - leader - down
		c.Stop(other)
		membertest.Eventually(t, 15*time.Second, func() error {
			out, _, err := ctl(ctx, "status", "-o", "json", "--kubeconfig", c.Kubeconfig(other))
			var st StatusOutput
			if perr := json.Unmarshal([]byte(out), &st); perr != nil || exitCode(err) != exitUnreachable ||
				!st.NoLeader || unreachable(st) != 2 || len(st.Members) != 3 {
				return fmt.Errorf("exit %d %v %v\n%s", exitCode(err), err, perr, out)
			}
			return nil
		})
		code, out := ctlProcess(t, []string{"LITEK8S_CACHE_DIR=" + cache}, "status", "--kubeconfig", kc)
		if code != exitUnreachable || !strings.Contains(out, "no leader (an election, or no quorum): each member's own view") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		t.Logf("ctl status without a leader:\n%s", out)
	})
}

// Every command has examples in its help and takes -o; the root's help
// lists the exit codes.
func TestCtlHelp(t *testing.T) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.Name() != "help" && cmd.Name() != "completion" {
			if cmd.Example == "" {
				t.Errorf("%s has no Example", cmd.CommandPath())
			}
			if cmd.Flag("output") == nil {
				t.Errorf("%s has no -o", cmd.CommandPath())
			}
		}
		for _, c := range cmd.Commands() {
			walk(c)
		}
	}
	root := newRoot()
	root.InitDefaultHelpCmd()
	walk(root)
	out, _, err := ctl(t.Context(), "--help")
	for _, want := range []string{"Exit codes:", "0  ok", "1  failed", "2  bad usage", "3  unreachable", "$KUBECONFIG",
		"--endpoints", "--timeout", "--context"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("ctl --help lacks %q: %v\n%s", want, err, out)
		}
	}
}
