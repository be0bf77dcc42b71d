package fault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/faultnet"
	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/member/membertest"
	"github.com/litek8s/litek8s/test/proc"
)

// profile is how hard the suite pushes.
type profile struct {
	members int
	hold    time.Duration // how long each fault lasts
	between time.Duration // writes between faults
	faults  []string
}

// The short profile runs in CI; LITEK8S_FAULT_PROFILE=long runs the long
// one by hand:
//
//	LITEK8S_FAULT_PROFILE=long go test -run TestFaults -v -timeout 60m ./test/fault/
var profiles = map[string]profile{
	"short": {members: 3, hold: 3 * time.Second, between: 2 * time.Second,
		faults: []string{"kill-leader", "kill-follower", "pause-leader", "partition-leader", "delay", "replace-follower", "disk-full-leader", "rolling-restart"}},
	"long": {members: 5, hold: 60 * time.Second, between: 20 * time.Second,
		faults: []string{"kill-leader", "kill-follower", "kill-two", "pause-leader", "pause-follower",
			"partition-leader", "partition-follower", "partition-minority", "delay", "replace-follower",
			"disk-full-leader", "disk-full-follower", "rolling-restart", "kill-leader", "pause-leader"}},
}

const namespace = "fault"

// cluster is the suite's member processes and their addresses (kept for
// restarts).
type cluster struct {
	t     *testing.T
	bin   string
	base  string
	flags []string
	procs []*proc.Proc
	admin *proc.Proc // whose kubeconfig holds the admin credentials
	// Each member has its own loopback address (ips[i]: its listeners and
	// the source of its connections to the others) and a fault-injecting
	// proxy in front of its API and one in front of its Raft listener;
	// the members know each other by the proxies' addresses.
	ips                []string
	apiAddr, raftAddr  []string // where member i listens
	apiProxy, rftProxy []*faultnet.Proxy
	args               [][]string // member i's own flags (advertised addresses)
	// tmpfs tells that each member's directory is a tmpfs of its own (as
	// root), which the disk-full faults fill.
	tmpfs bool
}

func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and pauses member processes")
	}
	name := os.Getenv("LITEK8S_FAULT_PROFILE")
	if name == "" {
		name = "short"
	}
	prof, found := profiles[name]
	if !found {
		t.Fatalf("LITEK8S_FAULT_PROFILE=%s: want short or long", name)
	}
	c := startCluster(t, prof.members)
	ctx := t.Context()
	if _, err := c.client(0).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h := &History{}
	wctx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range c.procs {
		c.watch(wctx, &wg, h, i)
		for w := range 2 {
			c.write(wctx, &wg, h, i, fmt.Sprintf("c%d%c", i, 'a'+w))
		}
	}
	for n, fault := range prof.faults {
		time.Sleep(prof.between)
		t.Logf("fault %d: %s for %v", n+1, fault, prof.hold)
		c.inject(fault, prof.hold)
		c.waitHealthy(60 * time.Second)
	}
	time.Sleep(prof.between)
	stopLoad()
	wg.Wait()

	states := c.converge(60 * time.Second)
	ok, failed, unknown := h.Counts()
	t.Logf("checked %d operations: %d acknowledged, %d refused, %d with an unknown outcome; %d watches",
		ok+failed+unknown, ok, failed, unknown, len(h.watches))
	if ok == 0 {
		t.Fatal("no write was acknowledged")
	}
	if bad := h.Check(states); len(bad) > 0 {
		if len(bad) > 40 {
			bad = append(bad[:40], fmt.Sprintf("... %d more", len(bad)-40))
		}
		t.Errorf("%d violations:\n%s\nhistory:\n%s", len(bad), strings.Join(bad, "\n"), truncate(h.Dump(), 20000))
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// startCluster starts n members: the first bootstraps, the others join it.
func startCluster(t *testing.T, n int) *cluster {
	c := &cluster{t: t, bin: proc.Build(t, "cmd/node"), base: t.TempDir(),
		flags: []string{"--join-token", "fault-join-token", "--log-level", "info"}}
	for i := range n {
		ip := fmt.Sprintf("127.0.0.%d", 11+i)
		api, raft := freeAddr(t, ip), freeAddr(t, ip)
		ap, err := faultnet.Listen("127.0.0.1:0", api)
		if err != nil {
			t.Fatal(err)
		}
		rp, err := faultnet.Listen("127.0.0.1:0", raft)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ap.Close(); rp.Close() })
		c.ips, c.apiAddr, c.raftAddr = append(c.ips, ip), append(c.apiAddr, api), append(c.raftAddr, raft)
		c.apiProxy, c.rftProxy = append(c.apiProxy, ap), append(c.rftProxy, rp)
		c.args = append(c.args, []string{"--api-advertise", ap.Addr(), "--raft-advertise", rp.Addr(),
			"--hostname", ip, "--source-ip", ip})
	}
	c.tmpfs = mountTmpfs(t, c.base, n)
	for i := range n {
		args := append(slices.Clone(c.args[i]), c.flags...)
		if i > 0 {
			args = append([]string{"--join", c.procs[0].URL}, args...)
		}
		c.procs = append(c.procs, proc.MustStart(t, c.bin, fmt.Sprintf("node-%d", i), filepath.Join(c.base, strconv.Itoa(i)),
			c.apiAddr[i], c.raftAddr[i], args...))
	}
	c.admin = c.procs[0]
	c.waitHealthy(60 * time.Second)
	return c
}

// mountTmpfs mounts a 2 GiB tmpfs (the long profile writes more than 256 MiB
// of log and snapshots per member) on base/0 … base/n-1 when it can (as
// root) and unmounts them on cleanup; false when it cannot.
func mountTmpfs(t *testing.T, base string, n int) bool {
	if os.Geteuid() != 0 {
		return false
	}
	for i := range n {
		dir := filepath.Join(base, strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2g", "tmpfs", dir).CombinedOutput(); err != nil {
			t.Logf("no tmpfs for the data dirs (%v: %s): the disk-full faults are skipped", err, out)
			return false
		}
		t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	}
	return true
}

// fill writes path until its file system has no space left.
func fill(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatalf("fill %s: %v", path, err)
		}
	}
}

// freeAddr returns ip:port with a port free now (the member listens on it
// a moment later; the proxy in front of it needs it first).
func freeAddr(t *testing.T, ip string) string {
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// partition cuts the members of side from the others, both ways, on the
// API and the Raft proxies (clients of the test still reach everyone).
func (c *cluster) partition(side ...int) {
	in := map[int]bool{}
	for _, i := range side {
		in[i] = true
	}
	for j := range c.procs {
		var others []string
		for k := range c.procs {
			if in[k] != in[j] {
				others = append(others, c.ips[k])
			}
		}
		c.apiProxy[j].Set(faultnet.Fault{Mode: faultnet.Blackhole}, others...)
		c.rftProxy[j].Set(faultnet.Fault{Mode: faultnet.Blackhole}, others...)
	}
}

// setAll applies f to every member's traffic to every other member.
func (c *cluster) setAll(f faultnet.Fault) {
	for j := range c.procs {
		c.apiProxy[j].Set(f, c.ips...)
		c.rftProxy[j].Set(f, c.ips...)
	}
}

// removeMember removes member id from the Raft configuration through
// member via (DELETE /admin/v1/members/{id}, what `ctl members remove`
// sends).
func (c *cluster) removeMember(via int, id string) {
	c.t.Helper()
	membertest.Eventually(c.t, 30*time.Second, func() error {
		req, err := http.NewRequestWithContext(c.t.Context(), http.MethodDelete, c.procs[via].URL+"/admin/v1/members/"+id, nil)
		if err != nil {
			return err
		}
		if tok := c.admin.REST.BearerToken; tok != "" { // else the kubeconfig's client certificate
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := c.procs[via].HTTP.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("remove %s: HTTP %d: %s", id, resp.StatusCode, b)
		}
		return nil
	})
}

// checkPartitioned checks, before the partition heals, that it took: the
// majority side has a leader of its own and the minority none that leads
// it (a leader cut off steps down once it misses a quorum).
func (c *cluster) checkPartitioned(minority []int) {
	c.t.Helper()
	membertest.Eventually(c.t, 10*time.Second, func() error {
		for i := range c.procs {
			st, err := c.status(i)
			if err != nil {
				return err
			}
			if slices.Contains(minority, i) {
				if st.Role == "Leader" {
					return fmt.Errorf("%s, cut off, still leads", st.ID)
				}
				continue
			}
			if st.LeaderID == "" || slices.ContainsFunc(minority, func(m int) bool { return c.procs[m].ID == st.LeaderID }) {
				return fmt.Errorf("%s on the majority side follows %q", st.ID, st.LeaderID)
			}
		}
		return nil
	})
}

func (c *cluster) heal() {
	for j := range c.procs {
		c.apiProxy[j].Heal()
		c.rftProxy[j].Heal()
	}
}

func (c *cluster) client(i int) kubernetes.Interface {
	cs := c.procs[i].Clientset(c.admin.REST)
	return cs
}

// status asks member i for its own status.
func (c *cluster) status(i int) (adminapi.Status, error) {
	var st adminapi.Status
	code, err := c.procs[i].Get(c.t.Context(), c.admin.REST, "/admin/v1/status", &st)
	if err == nil && code != 200 {
		err = fmt.Errorf("HTTP %d", code)
	}
	return st, err
}

// waitHealthy waits until every member is ready and one leads.
func (c *cluster) waitHealthy(d time.Duration) {
	membertest.Eventually(c.t, d, func() error {
		leaders := 0
		for i := range c.procs {
			st, err := c.status(i)
			if err != nil {
				return fmt.Errorf("%s: %w", c.procs[i].ID, err)
			}
			if !st.Ready {
				return fmt.Errorf("%s not ready", c.procs[i].ID)
			}
			if st.Role == "Leader" {
				leaders++
			}
		}
		if leaders != 1 {
			return fmt.Errorf("%d leaders", leaders)
		}
		return nil
	})
}

func (c *cluster) leader() int {
	for i := range c.procs {
		if st, err := c.status(i); err == nil && st.Role == "Leader" {
			return i
		}
	}
	c.t.Fatal("no leader")
	return -1
}

// restart starts member i again from its data dir on its addresses.
func (c *cluster) restart(i int) {
	p := c.procs[i]
	c.procs[i] = proc.MustStart(c.t, c.bin, p.ID, p.Dir, c.apiAddr[i], c.raftAddr[i], append(slices.Clone(c.args[i]), c.flags...)...)
	if p == c.admin {
		c.admin = c.procs[i]
	}
}

// inject makes one fault happen for hold, then heals it.
func (c *cluster) inject(fault string, hold time.Duration) {
	l := c.leader()
	f := (l + 1) % len(c.procs)
	switch fault {
	case "kill-leader", "kill-follower":
		i := map[bool]int{true: l, false: f}[fault == "kill-leader"]
		c.procs[i].Kill()
		time.Sleep(hold)
		c.restart(i)
	case "kill-two": // one after the other, the second before the first is back
		c.procs[l].Kill()
		time.Sleep(hold / 2)
		c.procs[f].Kill()
		time.Sleep(hold / 2)
		c.restart(l)
		c.restart(f)
	case "pause-leader", "pause-follower":
		i := map[bool]int{true: l, false: f}[fault == "pause-leader"]
		c.procs[i].Signal(syscall.SIGSTOP)
		time.Sleep(hold)
		c.procs[i].Signal(syscall.SIGCONT)
	case "partition-leader", "partition-follower": // a minority of one
		i := map[bool]int{true: l, false: f}[fault == "partition-leader"]
		c.partition(i)
		time.Sleep(hold)
		c.checkPartitioned([]int{i})
		c.heal()
	case "partition-minority": // the leader and one follower away from the rest
		c.partition(l, f)
		time.Sleep(hold)
		c.checkPartitioned([]int{l, f})
		c.heal()
	case "replace-follower": // its disk is gone: removed, then back with an empty data dir
		c.procs[f].Kill()
		c.removeMember(l, c.procs[f].ID)
		if err := os.RemoveAll(filepath.Join(c.procs[f].Dir, "data")); err != nil {
			c.t.Fatal(err)
		}
		time.Sleep(hold)
		p := c.procs[f]
		args := append(append([]string{"--join", c.procs[l].URL}, c.args[f]...), c.flags...)
		c.procs[f] = proc.MustStart(c.t, c.bin, p.ID, p.Dir, c.apiAddr[f], c.raftAddr[f], args...)
		if p == c.admin {
			c.admin = c.procs[f]
		}
	case "disk-full-leader", "disk-full-follower": // its data dir's file system has no byte left
		i := map[bool]int{true: l, false: f}[fault == "disk-full-leader"]
		if !c.tmpfs {
			c.t.Logf("%s skipped: the data dirs are not on file systems of their own (needs root to mount tmpfs)", fault)
			return
		}
		filler := filepath.Join(c.procs[i].Dir, "filler")
		fill(c.t, filler)
		// A leader whose log cannot grow steps down (hashicorp/raft, on a
		// failed StoreLogs); one whose log segment (preallocated) still has
		// room goes on leading and acknowledging what it did persist. Either way the
		// history must hold: nothing acknowledged is lost.
		time.Sleep(hold / 2)
		if st, err := c.status(i); err == nil {
			c.t.Logf("%s, its disk full for %v: role %s", st.ID, hold/2, st.Role)
		} else {
			c.t.Logf("%s, its disk full for %v: %v (exited: %v)", c.procs[i].ID, hold/2, err, c.procs[i].Exited())
		}
		hold -= hold / 2
		time.Sleep(hold)
		if err := os.Remove(filler); err != nil {
			c.t.Fatal(err)
		}
		if c.procs[i].Exited() { // it may have stopped rather than go on without its disk
			c.t.Logf("%s exited while its disk was full; restarting it", c.procs[i].ID)
			c.restart(i)
		}
	case "rolling-restart": // every member in turn, followers first, as an upgrade does (SIGTERM, then start)
		order := []int{}
		for i := range c.procs {
			if i != l {
				order = append(order, i)
			}
		}
		for _, i := range append(order, l) {
			c.procs[i].Stop()
			c.restart(i)
			c.waitHealthy(60 * time.Second)
		}
	case "delay": // every link between members slow
		c.setAll(faultnet.Fault{Delay: 30 * time.Millisecond})
		time.Sleep(hold)
		c.heal()
	default:
		c.t.Fatalf("unknown fault %s", fault)
	}
}

// write creates ConfigMaps through member i until ctx ends, recording
// each attempt.
func (c *cluster) write(ctx context.Context, wg *sync.WaitGroup, h *History, i int, client string) {
	cs := c.client(i)
	member := c.procs[i].ID
	wg.Go(func() {
		for k := 0; ctx.Err() == nil; k++ {
			name := fmt.Sprintf("%s-%d", client, k)
			op := Op{Client: client, Member: member, Key: namespace + "/" + name, Start: time.Now()}
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			cm, err := cs.CoreV1().ConfigMaps(namespace).Create(rctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
				Data: map[string]string{"k": name}}, metav1.CreateOptions{})
			cancel()
			op.End = time.Now()
			switch {
			case err == nil:
				op.Outcome = OK
				op.RV, _ = strconv.ParseUint(cm.ResourceVersion, 10, 64)
			case ctx.Err() != nil:
				op.Outcome, op.Err = Unknown, "cancelled at the end"
			default:
				op.Outcome, op.Err = classify(err), err.Error()
			}
			h.Add(op)
			if err != nil {
				time.Sleep(50 * time.Millisecond)
			}
		}
	})
}

// classify: a definite refusal (4xx but timeouts and throttling) means
// not done; anything else may have been done.
func classify(err error) Outcome {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		code := se.Status().Code
		if code >= 400 && code < 500 && code != 408 && code != 429 {
			return Failed
		}
	}
	return Unknown
}

// watch holds a watch on member i from the current revision, re-opening
// it after it ends (a member restarted, a 410), recording every event.
func (c *cluster) watch(ctx context.Context, wg *sync.WaitGroup, h *History, i int) {
	cs := c.client(i)
	member := c.procs[i].ID
	wg.Go(func() {
		for ctx.Err() == nil {
			l, err := cs.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			from, _ := strconv.ParseUint(l.ResourceVersion, 10, 64)
			w, err := cs.CoreV1().ConfigMaps(namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion,
				FieldSelector: "metadata.name!=kube-root-ca.crt"})
			if err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			rec := &Watch{Member: member, From: from}
			h.AddWatch(rec)
			for ev := range w.ResultChan() {
				e := Event{Type: string(ev.Type)}
				switch o := ev.Object.(type) {
				case *corev1.ConfigMap:
					e.Key = o.Namespace + "/" + o.Name
					e.RV, _ = strconv.ParseUint(o.ResourceVersion, 10, 64)
				case *metav1.Status:
					e.Code, e.Msg = int(o.Code), o.Message
				}
				if ev.Type == watch.Bookmark || (ev.Type == watch.Error && ctx.Err() != nil) {
					continue // client-go reports the end of its own context as an ERROR event
				}
				h.mu.Lock()
				rec.Events = append(rec.Events, e)
				h.mu.Unlock()
			}
			w.Stop()
		}
	})
}

// converge waits until every member applied as much as the leader, then
// reads each member's own objects (resourceVersion=0: no read index).
func (c *cluster) converge(d time.Duration) map[string]State {
	c.waitHealthy(d)
	membertest.Eventually(c.t, d, func() error {
		var applied []uint64
		for i := range c.procs {
			st, err := c.status(i)
			if err != nil {
				return err
			}
			applied = append(applied, st.AppliedIndex)
		}
		for _, a := range applied[1:] {
			if a != applied[0] {
				return fmt.Errorf("applied indexes %v", applied)
			}
		}
		return nil
	})
	states := map[string]State{}
	for i, p := range c.procs {
		l, err := c.client(i).CoreV1().ConfigMaps(namespace).List(c.t.Context(), metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			c.t.Fatalf("list on %s: %v", p.ID, err)
		}
		st := State{}
		for _, cm := range l.Items {
			if cm.Name == "kube-root-ca.crt" {
				continue
			}
			st[cm.Namespace+"/"+cm.Name], _ = strconv.ParseUint(cm.ResourceVersion, 10, 64)
		}
		states[p.ID] = st
	}
	return states
}
