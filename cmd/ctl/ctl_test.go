package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/member/membertest"
	"github.com/litek8s/litek8s/internal/version"
)

// TestMain lets the tests run ctl as a process (the test binary itself)
// when they need its real exit code and environment.
func TestMain(m *testing.M) {
	if os.Getenv("CTL_TEST_MAIN") == "1" {
		os.Args = append([]string{"ctl"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	// ctl remembers members in its cache dir: never the user's
	cache, err := os.MkdirTemp("", "ctl-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("LITEK8S_CACHE_DIR", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}

// ctl runs ctl in process with args and returns its output; err non-nil
// is exit code 1.
func ctl(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	root := newRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// ctlJSON runs ctl with -o json, which must succeed, into v.
func ctlJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out, stderr, err := ctl(t.Context(), append(args, "-o", "json")...)
	if err != nil {
		t.Fatalf("ctl %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("ctl %s: %v:\n%s", strings.Join(args, " "), err, out)
	}
}

// ctlProcess runs ctl as a process with env added and returns its exit
// code and output.
func ctlProcess(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "CTL_TEST_MAIN=1"), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	}
	t.Fatalf("run ctl: %v", err)
	return -1, ""
}

// adminStatus asks member url for its own status directly.
func adminStatus(t *testing.T, c *membertest.Cluster, i int) adminapi.Status {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", c.URL(i)+"/admin/v1/status", nil)
	if err != nil {
		t.Fatal(err)
	}
	rc := c.RESTConfig(i)
	req.Header.Set("Authorization", "Bearer "+rc.BearerToken)
	resp, err := (&http.Client{Transport: rc.Transport, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s adminapi.Status
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status of member %d: %s %v", i, resp.Status, err)
	}
	return s
}

// joinToken reads the cluster's join token from a member's data dir (the
// admin token where the data dir has no separate join token).
func joinToken(t *testing.T, dataDir string) string {
	t.Helper()
	for _, name := range []string{"join-token", "admin-token"} {
		b, err := os.ReadFile(filepath.Join(dataDir, "tls", name))
		if err == nil {
			return string(b)
		}
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	t.Fatalf("no join token in %s", dataDir)
	return ""
}

// startJoiner starts a member that joins the cluster through the member at
// seed; it is closed on cleanup (before the cluster's goroutine check).
func startJoiner(t *testing.T, c *membertest.Cluster, id string, seed int) *member.Member {
	t.Helper()
	m, err := join(t, c, id, seed, joinToken(t, filepath.Dir(c.Kubeconfig(0))))
	if err != nil {
		t.Fatalf("start %s joining through member %d: %v", id, seed, err)
	}
	return m
}

// join starts a member that joins the cluster through the member at seed
// with token; it is closed on cleanup (before the cluster's goroutine
// check).
func join(t *testing.T, c *membertest.Cluster, id string, seed int, token string) (*member.Member, error) {
	t.Helper()
	cfg := member.DefaultConfig()
	cfg.ID, cfg.DataDir = id, filepath.Join(t.TempDir(), id)
	cfg.APIAddr, cfg.Store.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Store.CommitTimeout = 5 * time.Millisecond
	cfg.Store.SnapshotInterval = time.Hour
	cfg.Join, cfg.JoinToken = c.URL(seed), token
	m, err := member.Start(t.Context(), cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { m.Close() })
	return m, nil
}

// silentListener accepts connections and never answers (a paused
// process, as far as its peers can tell); it returns its address.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

func byID(l adminapi.MemberList) map[string]adminapi.MemberInfo {
	out := make(map[string]adminapi.MemberInfo, len(l.Members))
	for _, m := range l.Members {
		out[m.ID] = m
	}
	return out
}

// The operator's round: a 4th member joins through a follower, ctl lists
// and removes it through a follower, status agrees with every member,
// leadership moves where asked, a member is demoted and promoted, the
// kubeconfig works with kubectl, and failures exit non-zero.
func TestCtlOperatesCluster(t *testing.T) {
	t.Setenv("LITEK8S_CACHE_DIR", t.TempDir())
	c := membertest.StartCluster(t, 3)
	ctx := t.Context()
	kc := c.Kubeconfig(0)
	f := c.Follower()
	viaFollower := []string{"--kubeconfig", kc, "--server", c.URL(f)}

	joiner := startJoiner(t, c, "m3", f)
	var l adminapi.MemberList
	membertest.Eventually(t, 10*time.Second, func() error {
		l = adminapi.MemberList{}
		ctlJSON(t, &l, "members", "list", "--kubeconfig", kc)
		ms := byID(l)
		if len(ms) != 4 || ms["m3"].APIURL != joiner.URL() || ms["m3"].Suffrage != "Voter" {
			return fmt.Errorf("members: %+v", l)
		}
		return nil
	})
	leaders := 0
	for _, m := range l.Members {
		if m.Leader {
			leaders++
		}
	}
	if leaders != 1 {
		t.Fatalf("%d leaders in %+v", leaders, l)
	}

	t.Run("version of ctl and of every member", func(t *testing.T) {
		out, _, err := ctl(ctx, "version", "--kubeconfig", kc, "--server", c.URL(f))
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if err != nil || len(lines) != 6 || lines[0] != "client: "+version.Get().String() ||
			strings.Join(strings.Fields(lines[1]), " ") != "MEMBER API VERSION COMMIT BUILT GO PLATFORM" ||
			!strings.Contains(out, adminStatus(t, c, f).ID+" ") || !strings.Contains(out, c.URL(f)) {
			t.Fatalf("ctl version: %v\n%s", err, out)
		}
		if out, _, err := ctl(ctx, "version", "--client", "--kubeconfig", filepath.Join(t.TempDir(), "none")); err != nil ||
			out != "client: "+version.Get().String()+"\n" {
			t.Fatalf("ctl version --client: %v\n%s", err, out)
		}
	})

	t.Run("status agrees with every member", func(t *testing.T) {
		membertest.Eventually(t, 10*time.Second, func() error { return statusAgrees(t, c, joiner, kc) })
		out, _, err := ctl(ctx, "status", "--kubeconfig", kc)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if err != nil || len(lines) != 5 || strings.Join(strings.Fields(lines[0]), " ") !=
			"ID API RAFT ROLE TERM APPLIED LAG READY VERSION" || strings.Count(out, "Leader") != 1 {
			t.Fatalf("status table: %v\n%s", err, out)
		}
		t.Logf("ctl status:\n%s", out)
	})

	t.Run("remove through a follower", func(t *testing.T) {
		var after adminapi.MemberList
		ctlJSON(t, &after, append([]string{"members", "remove", "m3"}, viaFollower...)...)
		if ms := byID(after); len(ms) != 3 || ms["m3"].ID != "" {
			t.Fatalf("after remove: %+v", after)
		}
		ctlJSON(t, &after, append([]string{"members", "list"}, viaFollower...)...)
		if len(after.Members) != 3 {
			t.Fatalf("list through a follower after remove: %+v", after)
		}
		for i := range c.N() {
			membertest.Eventually(t, 5*time.Second, func() error {
				ms, err := c.Member(i).Store().Membership()
				if err != nil {
					return err
				}
				for _, m := range ms {
					if m.ID == "m3" {
						return fmt.Errorf("member %d still has m3: %+v", i, ms)
					}
				}
				return nil
			})
		}
		joiner.Close()
		var st StatusOutput
		ctlJSON(t, &st, "status", "--kubeconfig", kc)
		if len(st.Members) != 3 || unreachable(st) != 0 {
			t.Fatalf("status after remove: %+v", st)
		}
	})

	t.Run("leader transfer", func(t *testing.T) {
		to := c.Follower()
		var li adminapi.LeaderInfo
		ctlJSON(t, &li, append([]string{"leader", "transfer", "--to", fmt.Sprintf("m%d", to)}, viaFollower...)...)
		if li.ID != fmt.Sprintf("m%d", to) || li.APIURL != c.URL(to) {
			t.Fatalf("transfer answered %+v, want m%d", li, to)
		}
		membertest.Eventually(t, 5*time.Second, func() error {
			if !c.Member(to).Store().IsLeader() {
				return fmt.Errorf("m%d does not lead", to)
			}
			return nil
		})
		out, _, err := ctl(ctx, "leader", "transfer", "--to", fmt.Sprintf("m%d", to), "--kubeconfig", kc)
		if err != nil || out != fmt.Sprintf("leader: m%d (%s)\n", to, c.URL(to)) {
			t.Fatalf("transfer to the leader: %q %v", out, err)
		}
	})

	t.Run("demote and promote", func(t *testing.T) {
		l := c.WaitLeader()
		target := fmt.Sprintf("m%d", (l+1)%3)
		via := []string{"--kubeconfig", kc, "--server", c.URL((l + 2) % 3)}
		for _, step := range []struct{ verb, want string }{{"demote", "Nonvoter"}, {"promote", "Voter"}} {
			var after adminapi.MemberList
			ctlJSON(t, &after, append([]string{"members", step.verb, target}, via...)...)
			if got := byID(after)[target].Suffrage; got != step.want {
				t.Fatalf("after %s: %s is %q: %+v", step.verb, target, got, after)
			}
			var st StatusOutput
			ctlJSON(t, &st, "status", "--kubeconfig", kc)
			for _, m := range st.Members {
				if m.ID == target && m.Suffrage != step.want {
					t.Fatalf("status after %s: %+v", step.verb, m)
				}
			}
		}
		out, _, err := ctl(ctx, "members", "list", "--kubeconfig", kc)
		if err != nil || !strings.HasPrefix(out, "ID ") || strings.Count(out, "Voter") != 3 {
			t.Fatalf("members list table: %v\n%s", err, out)
		}
		// m3, removed above, is listed with the reason.
		if _, removed, ok := strings.Cut(out, "\nREMOVED "); !ok || !strings.Contains(removed, "m3 ") ||
			!strings.Contains(removed, "removed by an administrator") {
			t.Fatalf("members list table without the removed member m3 and why:\n%s", out)
		}
	})

	t.Run("a member that never answers", func(t *testing.T) {
		silent := silentListener(t)
		var after adminapi.MemberList
		ctlJSON(t, &after, "members", "add", "ghost", "--raft-addr", "127.0.0.1:1", "--api-url", "https://"+silent,
			"--nonvoter", "--kubeconfig", kc)
		if g := byID(after)["ghost"]; g.Suffrage != "Nonvoter" || g.APIURL != "https://"+silent {
			t.Fatalf("after add: %+v", after)
		}
		start := time.Now()
		out, stderr, err := ctl(ctx, "status", "--kubeconfig", kc)
		if err == nil || !strings.Contains(stderr, "1 of 4 members unreachable") ||
			!regexp.MustCompile(`ghost .* unreachable .* \? \(no report\)`).MatchString(out) {
			t.Fatalf("status with a silent member: %v\n%s%s", err, out, stderr)
		}
		if d := time.Since(start); d > defaultDialTimeout+3*time.Second {
			t.Errorf("status took %v", d)
		}
		ctlJSON(t, &after, "members", "remove", "ghost", "--kubeconfig", kc)
		if len(after.Members) != 3 {
			t.Fatalf("after remove: %+v", after)
		}
	})

	t.Run("kubeconfig works with kubectl", func(t *testing.T) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			t.Skip("kubectl is not on PATH")
		}
		out, stderr, err := ctl(ctx, "kubeconfig", "--kubeconfig", kc, "--server", c.URL(f))
		if err != nil {
			t.Fatalf("ctl kubeconfig: %v %s", err, stderr)
		}
		if !strings.Contains(out, "server: "+c.URL(f)) {
			t.Fatalf("kubeconfig of member %d names another server:\n%s", f, out)
		}
		file := filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", file, "get", "ns").CombinedOutput()
		if err != nil || !strings.Contains(string(got), "kube-system") {
			t.Fatalf("kubectl get ns: %v\n%s", err, got)
		}
	})

	t.Run("environment instead of flags", func(t *testing.T) {
		code, out := ctlProcess(t, []string{"LITEK8S_KUBECONFIG=" + kc, "LITEK8S_OUTPUT=json"}, "members", "list")
		var l adminapi.MemberList
		if code != 0 || json.Unmarshal([]byte(out), &l) != nil || len(l.Members) != 3 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})

	t.Run("wrong token", func(t *testing.T) {
		for _, args := range [][]string{{"status"}, {"members", "remove", "m1"}, {"kubeconfig"}} {
			code, out := ctlProcess(t, nil, append(args, "--kubeconfig", kc, "--token", "wrong")...)
			if code == 0 || !strings.Contains(out, "401 Unauthorized: the admin token was refused") {
				t.Fatalf("ctl %v with a wrong token: exit %d\n%s", args, code, out)
			}
		}
		var l adminapi.MemberList
		ctlJSON(t, &l, "members", "list", "--kubeconfig", kc)
		if len(l.Members) != 3 {
			t.Fatalf("members after refused calls: %+v", l)
		}
	})

	t.Run("resync", func(t *testing.T) {
		l := c.WaitLeader()
		target := (l + 1) % 3
		id := fmt.Sprintf("m%d", target)
		var ml adminapi.MemberLag
		ctlJSON(t, &ml, "resync", id, "--kubeconfig", kc)
		if ml.ID != id {
			t.Fatalf("resync answered %+v", ml)
		}
		membertest.Eventually(t, 10*time.Second, func() error {
			lags, err := c.Member(l).Store().Lag()
			if err != nil {
				return err
			}
			for _, lg := range lags {
				if lg.ID == id && lg.Resyncs > 0 {
					return nil
				}
			}
			return fmt.Errorf("%s not told to resync: %+v", id, lags)
		})
		membertest.Eventually(t, 10*time.Second, func() error {
			var st StatusOutput
			ctlJSON(t, &st, "status", "--kubeconfig", kc)
			for _, m := range st.Members {
				switch {
				case m.Status == nil || !m.Status.Ready || m.Status.Resyncing:
					return fmt.Errorf("%s: %+v %s", m.ID, m.Status, m.Error)
				case m.LeaderView == nil || m.LeaderView.LastReport == nil && !m.Leader:
					return fmt.Errorf("%s: leader's view %+v", m.ID, m.LeaderView)
				case m.ID == id && m.LeaderView.Resyncs == 0:
					return fmt.Errorf("%s: no resync in the leader's view: %+v", m.ID, m.LeaderView)
				}
			}
			return nil
		})
		for _, tc := range []struct{ id, want string }{
			{fmt.Sprintf("m%d", l), "which does not resync"}, {"nobody", "404 Not Found"},
		} {
			if _, stderr, err := ctl(ctx, "resync", tc.id, "--kubeconfig", kc); err == nil || !strings.Contains(stderr, tc.want) {
				t.Errorf("resync %s: %v %s", tc.id, err, stderr)
			}
		}
	})

	t.Run("unreachable member fails status", func(t *testing.T) {
		down := c.Follower()
		c.Stop(down)
		code, out := ctlProcess(t, nil, "status", "--kubeconfig", c.Kubeconfig(c.WaitLeader()))
		if code != exitUnreachable || !strings.Contains(out, "unreachable") || !strings.Contains(out, "1 of 3 members unreachable") ||
			!strings.Contains(out, "(reported)") {
			t.Fatalf("status with member %d down: exit %d\n%s", down, code, out)
		}
		t.Logf("ctl status with m%d down:\n%s", down, out)
	})
}

// statusAgrees compares `ctl status -o json` with what each member says
// of itself just before and just after: same IDs and roles, one leader,
// one term, and applied indexes between the two readings.
func statusAgrees(t *testing.T, c *membertest.Cluster, joiner *member.Member, kc string) error {
	t.Helper()
	direct := func() map[string]adminapi.Status {
		out := make(map[string]adminapi.Status)
		for i := range c.N() {
			s := adminStatus(t, c, i)
			out[s.ID] = s
		}
		js := joinerStatus(t, c, joiner)
		out[js.ID] = js
		return out
	}
	before := direct()
	var st StatusOutput
	ctlJSON(t, &st, "status", "--kubeconfig", kc)
	after := direct()
	if len(st.Members) != 4 {
		return fmt.Errorf("ctl status lists %d members", len(st.Members))
	}
	leaders := 0
	for _, m := range st.Members {
		s, b, a := m.Status, before[m.ID], after[m.ID]
		switch {
		case s == nil:
			return fmt.Errorf("%s: no status: %s", m.ID, m.Error)
		case s.ID != m.ID || s.APIURL != m.APIURL || s.RaftAddr != m.RaftAddr:
			return fmt.Errorf("%s: configuration %+v, status %+v", m.ID, m.MemberInfo, *s)
		case s.Role != b.Role || s.Role != a.Role:
			return fmt.Errorf("%s: role %s, member says %s then %s", m.ID, s.Role, b.Role, a.Role)
		case s.Term != b.Term || s.Term != a.Term || s.Term != st.Members[0].Status.Term:
			return fmt.Errorf("%s: term %d, member says %d then %d", m.ID, s.Term, b.Term, a.Term)
		case s.AppliedIndex < b.AppliedIndex || s.AppliedIndex > a.AppliedIndex:
			return fmt.Errorf("%s: applied %d, member says %d then %d", m.ID, s.AppliedIndex, b.AppliedIndex, a.AppliedIndex)
		case m.Lag == nil:
			return fmt.Errorf("%s: no lag", m.ID)
		case !s.Ready || s.Version == "":
			return fmt.Errorf("%s: not ready or no version: %+v", m.ID, *s)
		}
		if s.Role == "Leader" {
			leaders++
			if !m.Leader || *m.Lag != s.CommitIndex-min(s.CommitIndex, s.AppliedIndex) {
				return fmt.Errorf("%s leads: %+v lag %d", m.ID, m, *m.Lag)
			}
		}
	}
	if leaders != 1 {
		return fmt.Errorf("%d leaders", leaders)
	}
	return nil
}

// joinerStatus asks the member that joined for its status (it shares the
// cluster's CA and token, so member 0's client reaches it).
func joinerStatus(t *testing.T, c *membertest.Cluster, joiner *member.Member) adminapi.Status {
	t.Helper()
	rc := c.RESTConfig(0)
	req, err := http.NewRequestWithContext(t.Context(), "GET", joiner.URL()+"/admin/v1/status", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+rc.BearerToken)
	resp, err := (&http.Client{Transport: rc.Transport, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s adminapi.Status
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Settings ctl refuses before it calls anything.
func TestCtlRefusesBadSettings(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nothing")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "-o", "xml"}, `--output "xml": want table, json, yaml`},
		{[]string{"status", "--kubeconfig", missing}, "give --kubeconfig, or --endpoints and --token"},
		{[]string{"status", "--timeout", "0s"}, "--timeout and --dial-timeout must be positive"},
		{[]string{"status", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"status", "extra"}, `unknown command "extra" for "ctl status"`},
		{[]string{"members", "frob"}, `unknown command "frob" for "ctl members"`},
		{[]string{"token", "create", "--ttl", "-1h", "--kubeconfig", missing}, "--ttl -1h0m0s: want 0"},
		{[]string{"members", "add", "x", "--kubeconfig", missing}, `required flag(s) "api-url", "raft-addr" not set`},
		{[]string{"members", "remove"}, "accepts 1 arg(s)"},
	} {
		_, stderr, err := ctl(t.Context(), tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(stderr, tc.want) {
			t.Errorf("ctl %v: %v (stderr %q), want %q", tc.args, err, stderr, tc.want)
		}
		if code := exitCode(err); code != exitUsage {
			t.Errorf("ctl %v: exit code %d, want %d (bad usage): %v", tc.args, code, exitUsage, err)
		}
	}
}
