package ops

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/member/membertest"
	"github.com/litek8s/litek8s/test/proc"
)

// Issue 6, acceptance 1: three member processes started with
// --bootstrap-expect 3 in random order form exactly one cluster; a 4th
// joins through a follower and is removed with ctl; `ctl status -o json`
// matches what each member says of itself.
func TestBootstrapExpectAddRemove(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 4 member processes")
	}
	bin, ctl := proc.Build(t, "cmd/node"), proc.Build(t, "cmd/ctl")
	base := t.TempDir()
	// the members must know each other's API addresses before they start:
	// ports free a moment ago
	var addrs, peers []string
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, ln.Addr().String())
		peers = append(peers, "https://"+ln.Addr().String())
		ln.Close()
	}
	const token = "ops-join-token"
	procs := make([]*proc.Proc, 3)
	errs := make([]error, 3)
	order := rand.Perm(3)
	t.Logf("start order %v", order)
	var wg sync.WaitGroup
	for k, i := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(k) * 400 * time.Millisecond)
			procs[i], errs[i] = proc.Start(t, bin, fmt.Sprintf("node-%d", i), filepath.Join(base, fmt.Sprint(i)), addrs[i], "127.0.0.1:0",
				"--bootstrap-expect", "3", "--peers", strings.Join(peers, ","), "--join-token", token)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(procs[0].Dir, "data", "kubeconfig")
	ctlRun := func(server string, args ...string) ([]byte, error) {
		args = append([]string{"--kubeconfig", kubeconfig, "--server", server}, args...)
		out, err := exec.CommandContext(t.Context(), ctl, args...).Output()
		if ee, ok := err.(*exec.ExitError); ok {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		return out, err
	}
	members := func(server string) []adminapi.MemberInfo {
		t.Helper()
		out, err := ctlRun(server, "members", "list", "-o", "json")
		if err != nil {
			t.Fatalf("ctl members list: %v", err)
		}
		var l adminapi.MemberList
		if err := json.Unmarshal(out, &l); err != nil {
			t.Fatalf("ctl members list: %v: %s", err, out)
		}
		return l.Members
	}
	ids := func(ms []adminapi.MemberInfo) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		slices.Sort(out)
		return out
	}
	// one cluster: every member holds the same CA and sees the same three
	for i, p := range procs {
		membertest.Eventually(t, 30*time.Second, func() error {
			if got := ids(members(p.URL)); !slices.Equal(got, []string{"node-0", "node-1", "node-2"}) {
				return fmt.Errorf("%s sees %v", p.ID, got)
			}
			return nil
		})
		ca, err := os.ReadFile(filepath.Join(p.Dir, "data", "tls", "ca.crt"))
		first, _ := os.ReadFile(filepath.Join(procs[0].Dir, "data", "tls", "ca.crt"))
		if err != nil || string(ca) != string(first) {
			t.Fatalf("member %d has another CA (%v)", i, err)
		}
	}
	var follower *proc.Proc
	for _, m := range members(procs[0].URL) {
		for _, p := range procs {
			if p.ID == m.ID && !m.Leader && follower == nil {
				follower = p
			}
		}
	}
	if follower == nil {
		t.Fatal("no follower")
	}

	fourth := proc.MustStart(t, bin, "node-3", filepath.Join(base, "3"), "127.0.0.1:0", "127.0.0.1:0", "--join", follower.URL, "--join-token", token)
	membertest.Eventually(t, 30*time.Second, func() error {
		if got := ids(members(fourth.URL)); len(got) != 4 {
			return fmt.Errorf("members %v", got)
		}
		return nil
	})
	if out, err := ctlRun(follower.URL, "members", "remove", "node-3"); err != nil {
		t.Fatalf("ctl members remove node-3 through a follower: %v: %s", err, out)
	}
	if got := ids(members(procs[0].URL)); !slices.Equal(got, []string{"node-0", "node-1", "node-2"}) {
		t.Fatalf("members after the removal: %v", got)
	}

	// ctl status -o json agrees with each member's own status
	membertest.Eventually(t, 30*time.Second, func() error {
		out, err := ctlRun(follower.URL, "status", "-o", "json")
		if err != nil {
			return fmt.Errorf("ctl status: %v", err)
		}
		var st struct {
			Members []struct {
				ID     string           `json:"id"`
				Status *adminapi.Status `json:"status"`
			} `json:"members"`
		}
		if err := json.Unmarshal(out, &st); err != nil {
			return err
		}
		if len(st.Members) != 3 {
			return fmt.Errorf("ctl status lists %d members", len(st.Members))
		}
		leaders := 0
		for _, m := range st.Members {
			var p *proc.Proc
			for _, q := range procs {
				if q.ID == m.ID {
					p = q
				}
			}
			if p == nil || m.Status == nil {
				return fmt.Errorf("ctl status: member %s: %+v", m.ID, m.Status)
			}
			var own adminapi.Status
			if _, err := p.Get(t.Context(), p.REST, "/admin/v1/status", &own); err != nil {
				return err
			}
			c, o := *m.Status, own
			if c.ID != o.ID || c.APIURL != o.APIURL || c.RaftAddr != o.RaftAddr || c.Role != o.Role || c.Term != o.Term ||
				c.LeaderID != o.LeaderID || c.Ready != o.Ready || c.Version != o.Version || o.AppliedIndex < c.AppliedIndex {
				return fmt.Errorf("%s: ctl status says %+v, the member %+v", m.ID, c, o)
			}
			if c.Role == "Leader" {
				leaders++
			}
		}
		if leaders != 1 {
			return fmt.Errorf("%d leaders", leaders)
		}
		return nil
	})
}
