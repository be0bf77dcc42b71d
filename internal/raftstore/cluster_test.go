package raftstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
)

// testCluster is N real members in one process: real TCP Raft transport on
// 127.0.0.1, real Raft log and snapshots under t.TempDir(), each member's
// InternalHandler served over real HTTP. Member 0 bootstraps; the others
// join through it.
type testCluster struct {
	t       testing.TB
	token   string
	client  *http.Client
	tweak   func(*Config)
	members []*testMember
}

type testMember struct {
	id        string
	dir       string
	bootstrap bool
	raftAddr  string // "127.0.0.1:0" until the first start, then the bound address
	apiAddr   string // likewise for the HTTP listener
	url       string

	store     *Store // nil while stopped
	srv       *http.Server
	serveDone chan struct{}
}

// newTestCluster starts n members with fast Raft timings. tweak, if not nil,
// adjusts every member's config (log compaction settings, say). Every store
// and server is closed, and goroutines checked for leaks, on t.Cleanup.
func newTestCluster(t testing.TB, n int, tweak func(*Config)) *testCluster {
	t.Helper()
	t.Cleanup(checkNoGoroutineLeak(t)) // registered first: runs last
	c := &testCluster{
		t:     t,
		token: "test-internal-token",
		client: &http.Client{
			Timeout: 5 * time.Second,
			// members authenticate each other with certificates; these
			// plain-HTTP test members use a header instead (testPeerAuth)
			Transport: testPeerHeader{"test-internal-token",
				&http.Transport{DialContext: (&net.Dialer{Timeout: time.Second}).DialContext}},
		},
		tweak: tweak,
	}
	// The data dirs before c.close: cleanups run last-registered first,
	// and a member stopping may still write to its dir (a snapshot as it
	// stops).
	base := t.TempDir()
	t.Cleanup(c.close)
	for i := range n {
		m := &testMember{
			id:        "m" + strconv.Itoa(i),
			dir:       filepath.Join(base, "m"+strconv.Itoa(i)),
			bootstrap: i == 0,
			raftAddr:  "127.0.0.1:0",
			apiAddr:   "127.0.0.1:0",
		}
		c.members = append(c.members, m)
		c.start(m)
	}
	c.WaitLeader()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for _, m := range c.members[1:] {
		if err := m.store.Join(ctx, c.members[0].url); err != nil {
			t.Fatalf("%s: join: %v", m.id, err)
		}
	}
	// Every member knows the leader's API URL (it needs the leader's
	// member record, replicated through the log).
	for _, m := range c.members {
		if _, _, err := m.store.WaitLeader(ctx); err != nil {
			t.Fatalf("%s: no leader: %v", m.id, err)
		}
	}
	return c
}

func (c *testCluster) config(m *testMember) Config {
	cfg := DefaultConfig()
	cfg.ID = m.id
	cfg.DataDir = m.dir
	cfg.RaftAddr = m.raftAddr
	cfg.APIURL = m.url
	cfg.Bootstrap = m.bootstrap
	cfg.FeedSize = 1000
	cfg.WatchBuffer = 100
	cfg.HeartbeatTimeout = 150 * time.Millisecond
	cfg.ElectionTimeout = 150 * time.Millisecond
	cfg.LeaderLeaseTimeout = 100 * time.Millisecond
	cfg.CommitTimeout = 5 * time.Millisecond
	cfg.SnapshotThreshold = 1 << 20 // only explicit snapshots
	cfg.ApplyTimeout = 5 * time.Second
	cfg.Peer = c.client
	cfg.PeerAuth = testPeerAuth(c.token)
	cfg.VerifyJoinToken = joinTokenIs(c.token)
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if c.tweak != nil {
		c.tweak(&cfg)
	}
	return cfg
}

// retryBusy retries fn while the address it binds is still in use (a port
// just released by a stopped member).
func retryBusy(t testing.TB, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := fn()
		if err == nil {
			return
		}
		if !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// start opens m's store from its data dir and serves its internal handler,
// on the same addresses as before when m ran already.
func (c *testCluster) start(m *testMember) {
	c.t.Helper()
	var ln net.Listener
	retryBusy(c.t, m.id+": listen", func() (err error) {
		ln, err = net.Listen("tcp", m.apiAddr)
		return err
	})
	m.apiAddr = ln.Addr().String()
	m.url = "http://" + m.apiAddr
	retryBusy(c.t, m.id+": open", func() (err error) {
		m.store, err = Open(c.config(m))
		return err
	})
	m.raftAddr = m.store.RaftAddr()
	m.srv = &http.Server{Handler: m.store.InternalHandler(), ReadHeaderTimeout: 5 * time.Second}
	m.serveDone = make(chan struct{})
	go func(srv *http.Server, done chan struct{}) {
		defer close(done)
		srv.Serve(ln)
	}(m.srv, m.serveDone)
}

// Stop stops member i: its HTTP server, then its store.
func (c *testCluster) Stop(i int) {
	c.t.Helper()
	m := c.members[i]
	if m.store == nil {
		return
	}
	m.srv.Close()
	<-m.serveDone
	if err := m.store.Close(); err != nil {
		c.t.Errorf("%s: close: %v", m.id, err)
	}
	m.store = nil
}

// Restart reopens member i from its data dir with the same Raft address and
// API URL.
func (c *testCluster) Restart(i int) {
	c.t.Helper()
	c.Stop(i)
	c.start(c.members[i])
}

func (c *testCluster) close() {
	for i := range c.members {
		c.Stop(i)
	}
	c.client.CloseIdleConnections()
}

// running returns the indexes of the running members.
func (c *testCluster) running() []int {
	var out []int
	for i, m := range c.members {
		if m.store != nil {
			out = append(out, i)
		}
	}
	return out
}

func (c *testCluster) store(i int) *Store { return c.members[i].store }

// WaitLeader waits until exactly one running member (other than those in
// exclude) leads and serves consistent reads as leader, and returns it.
func (c *testCluster) WaitLeader(exclude ...int) int {
	c.t.Helper()
	leader := -1
	eventually(c.t, 15*time.Second, func() error {
		leader = -1
		for _, i := range c.running() {
			if !c.store(i).IsLeader() {
				continue
			}
			if leader >= 0 {
				return fmt.Errorf("two leaders: %d and %d", leader, i)
			}
			leader = i
		}
		if leader < 0 {
			return errors.New("no leader")
		}
		for _, x := range exclude {
			if x == leader {
				return fmt.Errorf("member %d still leads", x)
			}
		}
		ctx, cancel := context.WithTimeout(c.t.Context(), time.Second)
		defer cancel()
		return c.store(leader).Sync(ctx) // after its Barrier
	})
	return leader
}

// propose proposes w on the current leader, retrying only while the member
// asked turns out not to lead (the write was not made).
func (c *testCluster) propose(w kv.Write) *kv.Object {
	c.t.Helper()
	var obj *kv.Object
	eventually(c.t, 15*time.Second, func() error {
		l := c.WaitLeader()
		var err error
		obj, err = c.store(l).Propose(c.t.Context(), w)
		if errors.Is(err, kv.ErrNotLeader) {
			return err
		}
		if err != nil {
			c.t.Fatalf("propose %v %v: %v", w.Op, w.Key, err)
		}
		return nil
	})
	return obj
}

// checkConsistent waits until every running member has applied as much as
// the leader, then checks they hold the same objects: same keys, same bytes,
// same RVs, both in the raw store and through consistent Lists.
func (c *testCluster) checkConsistent() {
	c.t.Helper()
	l := c.WaitLeader()
	eventually(c.t, 15*time.Second, func() error {
		want, rev := dumpFSM(c.store(l).fsm), c.store(l).Revision()
		for _, i := range c.running() {
			if got := c.store(i).Revision(); got != rev {
				return fmt.Errorf("member %d at revision %d, leader %d at %d", i, got, l, rev)
			}
			if d := diffDumps(want, dumpFSM(c.store(i).fsm)); d != "" {
				return fmt.Errorf("member %d differs from leader %d: %s", i, l, d)
			}
		}
		if c.store(l).Revision() != rev {
			return errors.New("leader moved on; again")
		}
		return nil
	})
	var first []dumpEntry
	for n, i := range c.running() {
		list, err := c.store(i).List(c.t.Context(), "configmaps", "", true)
		if err != nil {
			c.t.Fatalf("member %d: consistent list: %v", i, err)
		}
		var items []dumpEntry
		list.Range("", func(o *kv.Object) bool {
			items = append(items, dumpEntry{Raw: string(o.Raw), RV: o.RV})
			return true
		})
		if n == 0 {
			first = items
			continue
		}
		if !slices.Equal(items, first) {
			c.t.Errorf("member %d lists %d configmaps, member %d lists %d (or different bytes, RVs)", i, len(items), c.running()[0], len(first))
		}
	}
}

func cmWrite(op kv.Op, ns, name string, gen int) kv.Write {
	w := kv.Write{Op: op, Key: cmKey(ns, name)}
	if op != kv.OpDelete {
		w.Object = configMap(ns, name, "uid-"+name, map[string]string{"gen": strconv.Itoa(gen)}, 16)
	}
	return w
}

func TestClusterConsistentReadOnEveryMember(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	l := c.WaitLeader()
	leader := c.store(l)

	// Watches on every member, from the current revision.
	start := leader.Revision()
	watchers := make(map[int]kv.Watcher)
	for _, i := range c.running() {
		if err := c.store(i).Sync(t.Context()); err != nil {
			t.Fatalf("member %d: sync: %v", i, err)
		}
		w, err := c.store(i).Watch("configmaps", "ns", start)
		if err != nil {
			t.Fatalf("member %d: watch: %v", i, err)
		}
		defer w.Stop()
		watchers[i] = w
	}

	var last []*kv.Object
	for n := range 10 {
		name := "cm-" + strconv.Itoa(n)
		obj, err := leader.Propose(t.Context(), cmWrite(kv.OpCreate, "ns", name, 0))
		if err != nil {
			t.Fatal(err)
		}
		last = append(last, obj)
		// Readable right away, consistently, on every member: followers
		// go through the leader's read index.
		for _, i := range c.running() {
			got, rev, err := c.store(i).Get(t.Context(), obj.Key, true)
			if err != nil {
				t.Fatalf("member %d: consistent get of %s right after propose: %v", i, name, err)
			}
			if got.RV != obj.RV || string(got.Raw) != string(obj.Raw) || rev < obj.RV {
				t.Fatalf("member %d: got %s at RV %d (rev %d), want %s at RV %d", i, got.Raw, got.RV, rev, obj.Raw, obj.RV)
			}
		}
	}
	upd, err := leader.Propose(t.Context(), kv.Write{Op: kv.OpUpdate, Key: cmKey("ns", "cm-3"), ExpectedRV: last[3].RV,
		Object: configMap("ns", "cm-3", "uid-cm-3", map[string]string{"gen": "1"}, 16)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leader.Propose(t.Context(), kv.Write{Op: kv.OpUpdate, Key: cmKey("ns", "cm-3"), ExpectedRV: last[3].RV,
		Object: configMap("ns", "cm-3", "uid-cm-3", nil, 16)}); !errors.Is(err, kv.ErrConflict) {
		t.Errorf("stale update through raft = %v, want ErrConflict", err)
	}
	del, err := leader.Propose(t.Context(), cmWrite(kv.OpDelete, "ns", "cm-5", 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range c.running() {
		if got, _, err := c.store(i).Get(t.Context(), upd.Key, true); err != nil || got.RV != upd.RV {
			t.Errorf("member %d: updated object: %v, %v", i, got, err)
		}
		if _, _, err := c.store(i).Get(t.Context(), del.Key, true); !errors.Is(err, kv.ErrNotFound) {
			t.Errorf("member %d: deleted object: %v, want ErrNotFound", i, err)
		}
	}

	// A write no FSM could decode is refused before it reaches the log.
	if _, err := leader.Propose(t.Context(), kv.Write{Key: cmKey("ns", "zero-op")}); err == nil {
		t.Error("propose with a zero Op succeeded")
	}

	// Writes on a follower are refused (the API forwards them).
	for _, i := range c.running() {
		if i == l {
			continue
		}
		if _, err := c.store(i).Propose(t.Context(), cmWrite(kv.OpCreate, "ns", "x", 0)); !errors.Is(err, kv.ErrNotLeader) {
			t.Errorf("member %d: propose on a follower = %v, want ErrNotLeader", i, err)
		}
	}

	// Every member's change feed saw the same 12 events, in order.
	for i, w := range watchers {
		var rvs []uint64
		for range 12 {
			ev := recvEvent(t, w)
			rvs = append(rvs, ev.Object.RV)
		}
		if rvs[10] != upd.RV || rvs[11] != del.RV || rvs[0] != last[0].RV {
			t.Errorf("member %d: events at %v", i, rvs)
		}
	}

	// Membership is known everywhere, with API URLs.
	for _, i := range c.running() {
		ms, err := c.store(i).Members()
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 3 {
			t.Fatalf("member %d: %d members, want 3", i, len(ms))
		}
		for _, m := range ms {
			want := c.members[m.ID[1]-'0']
			if m.APIURL != want.url || m.RaftAddr != want.raftAddr {
				t.Errorf("member %d sees %+v, want %s %s", i, m, want.url, want.raftAddr)
			}
		}
		if u, self, ok := c.store(i).Leader(); !ok || u != c.members[l].url || self != (i == l) {
			t.Errorf("member %d: Leader() = %q %v %v, want %q", i, u, self, ok, c.members[l].url)
		}
	}
	c.checkConsistent()
}

func TestClusterLeaderFailover(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	old := c.WaitLeader()
	objs := make(map[string]*kv.Object)
	for n := range 10 {
		name := "before-" + strconv.Itoa(n)
		objs[name] = c.propose(cmWrite(kv.OpCreate, "ns", name, 0))
	}

	w, err := c.store(old).Watch("configmaps", "", c.store(old).Revision())
	if err != nil {
		t.Fatal(err)
	}
	c.Stop(old)
	// Closing a store ends its watches with ErrClosed.
	drain(t, w)
	if err := w.Err(); !errors.Is(err, kv.ErrClosed) {
		t.Errorf("watch on a closed member: Err() = %v, want ErrClosed", err)
	}
	nl := c.WaitLeader(old)
	t.Logf("leader %d stopped, %d elected", old, nl)
	// The new leader has every acknowledged write, and takes new ones.
	for name, want := range objs {
		got, _, err := c.store(nl).Get(t.Context(), want.Key, true)
		if err != nil || got.RV != want.RV {
			t.Fatalf("new leader lost %s: %v, %v", name, got, err)
		}
	}
	for n := range 10 {
		name := "after-" + strconv.Itoa(n)
		objs[name] = c.propose(cmWrite(kv.OpCreate, "ns", name, 0))
	}
	c.propose(kv.Write{Op: kv.OpUpdate, Key: cmKey("ns", "before-1"), ExpectedRV: objs["before-1"].RV,
		Object: configMap("ns", "before-1", "uid-before-1", map[string]string{"gen": "2"}, 16)})
	c.propose(cmWrite(kv.OpDelete, "ns", "before-2", 0))

	// The old leader restarts from its data dir and catches up.
	c.Restart(old)
	eventually(t, 15*time.Second, func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		got, _, err := c.store(old).Get(ctx, cmKey("ns", "after-9"), true)
		if err != nil {
			return err
		}
		if got.RV != objs["after-9"].RV {
			return fmt.Errorf("RV %d, want %d", got.RV, objs["after-9"].RV)
		}
		return nil
	})
	if _, _, err := c.store(old).Get(t.Context(), cmKey("ns", "before-2"), true); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("restarted member still has the deleted object: %v", err)
	}
	c.checkConsistent()
}

func TestClusterSnapshotCatchUp(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) { cfg.TrailingLogs = 4 })
	l := c.WaitLeader()
	for n := range 5 {
		c.propose(cmWrite(kv.OpCreate, "ns", "early-"+strconv.Itoa(n), 0))
	}
	f := (l + 1) % 3
	c.checkConsistent()
	lastBefore, err := c.store(f).logs.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	c.Stop(f)

	for n := range 60 {
		c.propose(cmWrite(kv.OpCreate, "ns", "late-"+strconv.Itoa(n), 0))
	}
	c.propose(cmWrite(kv.OpDelete, "ns", "early-0", 0))
	l = c.WaitLeader()
	snapRev := c.store(l).Revision()
	if err := c.store(l).Snapshot(); err != nil {
		t.Fatalf("leader snapshot: %v", err)
	}
	first, err := c.store(l).logs.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	if first <= lastBefore+1 {
		t.Fatalf("leader kept its log from %d; the stopped member needs %d: no compaction", first, lastBefore+1)
	}
	snapIndex, _ := strconv.ParseUint(c.store(l).Stats()["last_snapshot_index"], 10, 64)

	c.Restart(f)
	eventually(t, 20*time.Second, func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		_, _, err := c.store(f).Get(ctx, cmKey("ns", "late-59"), true)
		return err
	})
	st := c.store(f).Stats()
	installed, _ := strconv.ParseUint(st["last_snapshot_index"], 10, 64)
	t.Logf("member %d stopped at log index %d; leader's log starts at %d, snapshot at %d; member installed %d, now at revision %d",
		f, lastBefore, first, snapIndex, installed, c.store(f).Revision())
	if installed < snapIndex {
		t.Errorf("restarted member's last snapshot index %d, want the leader's %d (installed)", installed, snapIndex)
	}
	if rev := c.store(f).Revision(); rev < snapRev {
		t.Errorf("restarted member at revision %d, leader was at %d when it took the snapshot", rev, snapRev)
	}
	// Its change feed starts at the snapshot: older revisions are gone.
	if _, err := c.store(f).Watch("configmaps", "", 1); !errors.Is(err, kv.ErrExpired) {
		t.Errorf("watch from 1 after a snapshot install = %v, want ErrExpired", err)
	}
	c.checkConsistent()

	// The member that took the snapshot restarts from it: its store holds
	// the snapshot as soon as Open returns, before any leader contact.
	c.Restart(l)
	if rev := c.store(l).Revision(); rev < snapRev {
		t.Errorf("member restarted from its snapshot at revision %d, want >= %d", rev, snapRev)
	}
	if _, _, err := c.store(l).Get(t.Context(), cmKey("ns", "late-59"), false); err != nil {
		t.Errorf("member restarted from its snapshot: %v", err)
	}
	c.propose(cmWrite(kv.OpCreate, "ns", "last", 0))
	c.checkConsistent()
}

// testPeerHeader marks the test members' internal calls with token.
type testPeerHeader struct {
	token string
	next  http.RoundTripper
}

func (h testPeerHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Member", h.token)
	return h.next.RoundTrip(r)
}

// testPeerAuth accepts the calls testPeerHeader marked.
func testPeerAuth(token string) func(*http.Request) error {
	return func(r *http.Request) error {
		if r.Header.Get("X-Test-Member") != token {
			return errors.New("no member header")
		}
		return nil
	}
}

// A consistent read during a change of leader waits for the new leader
// instead of failing (kube-apiserver's etcd client retries the same way).
func TestClusterSyncAcrossLeaderChange(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	c.WaitLeader()
	c.propose(cmWrite(kv.OpCreate, "ns", "before", 0))

	stop := make(chan struct{})
	errs := make(chan error, 3)
	var reads atomic.Int64
	var wg sync.WaitGroup
	for _, i := range c.running() {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				if err := c.store(i).Sync(t.Context()); err != nil {
					errs <- fmt.Errorf("member %d: sync: %w", i, err)
					return
				}
				reads.Add(1)
			}
		})
	}
	for range 4 {
		l := c.WaitLeader()
		if _, err := c.store(l).TransferLeadership(t.Context(), ""); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if reads.Load() == 0 {
		t.Fatal("no read completed")
	}
}
