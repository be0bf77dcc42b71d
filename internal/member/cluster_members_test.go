package member

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// A write sent to a follower is forwarded to the leader and readable on
// every member right after it is acknowledged.
func TestWriteOnFollowerReadableEverywhere(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	ctx := t.Context()
	f := c.follower()
	created, err := c.clients[f].CoreV1().ConfigMaps("default").Create(ctx, configMap("via-follower", map[string]string{"a": "1"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create on follower %d: %v", f, err)
	}
	for i := range c.members {
		got, err := c.clients[i].CoreV1().ConfigMaps("default").Get(ctx, "via-follower", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
		if got.ResourceVersion != created.ResourceVersion || got.UID != created.UID || got.Data["a"] != "1" {
			t.Fatalf("member %d has %s/%s %v, want %s/%s", i, got.ResourceVersion, got.UID, got.Data, created.ResourceVersion, created.UID)
		}
	}
	// Updates and deletes through a follower too.
	created.Data["a"] = "2"
	if _, err := c.clients[f].CoreV1().ConfigMaps("default").Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update on follower: %v", err)
	}
	if err := c.clients[f].CoreV1().ConfigMaps("default").Delete(ctx, "via-follower", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete on follower: %v", err)
	}
	for i := range c.members {
		if _, err := c.clients[i].CoreV1().ConfigMaps("default").Get(ctx, "via-follower", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("member %d after delete: %v", i, err)
		}
	}
	c.sameObjects(ctx)
}

// A consistent read on a follower right after a write on the leader sees
// the write, every time (read-index).
func TestConsistentReadOnFollowerAfterLeaderWrite(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	ctx := t.Context()
	l := c.leader()
	for n := range 50 {
		f := (l + 1 + n%2) % 3
		name := "rw-" + strconv.Itoa(n)
		cm, err := c.clients[l].CoreV1().ConfigMaps("default").Create(ctx, configMap(name, nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.clients[f].CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("write %d: follower %d does not see it: %v", n, f, err)
		}
		if got.ResourceVersion != cm.ResourceVersion {
			t.Fatalf("follower %d: rv %s, want %s", f, got.ResourceVersion, cm.ResourceVersion)
		}
		l2, err := c.clients[f].CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		written := 0
		for _, cm := range l2.Items {
			if cm.Name != rootCAName { // the root CA publisher's, not ours
				written++
			}
		}
		if written != n+1 {
			t.Fatalf("follower %d lists %d of our items after %d writes", f, written, n+1)
		}
	}
	c.sameObjects(ctx)
}

// The leader stops; a new leader is elected and writes continue; the old
// leader restarts from its data dir and catches up.
func TestLeaderFailoverAndRestart(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	ctx := t.Context()
	old := c.leader()
	for i := range 10 {
		if _, err := c.clients[old].CoreV1().ConfigMaps("default").Create(ctx, configMap(fmt.Sprintf("before-%d", i), nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.stop(old)
	nl := c.leader()
	if nl == old {
		t.Fatal("stopped member still leads")
	}
	for i := range 10 {
		via := (old + 1 + i%2) % 3 // through the new leader and the other follower
		if err := createWithRetry(t, c, via, fmt.Sprintf("after-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	c.start(old)
	want := c.sameObjects(ctx)
	if len(want) != 20 {
		t.Fatalf("want 20 configmaps on every member, got %d: %v", len(want), want)
	}
}

// A member down while the leader compacts its log catches up through a
// snapshot install when it restarts.
func TestRestartedMemberCatchesUpThroughSnapshot(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) {
		cfg.Store.SnapshotThreshold = 16
		cfg.Store.TrailingLogs = 4
	})
	ctx := t.Context()
	down := c.follower()
	c.stop(down)
	l := c.leader()
	for i := range 60 {
		if _, err := c.clients[l].CoreV1().ConfigMaps("default").Create(ctx, configMap(fmt.Sprintf("cm-%02d", i), map[string]string{"i": strconv.Itoa(i)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.members[l].Store().Snapshot(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	c.start(down)
	want := c.sameObjects(ctx)
	if len(want) != 60 {
		t.Fatalf("want 60 configmaps, got %d", len(want))
	}
	stats := c.members[down].Store().Stats()
	if stats["last_snapshot_index"] == "0" {
		t.Fatalf("restarted member caught up without a snapshot install: %v", stats)
	}
}

func createWithRetry(t *testing.T, c *testCluster, i int, name string) error {
	t.Helper()
	var err error
	for range 50 {
		_, err = c.clients[i].CoreV1().ConfigMaps("default").Create(t.Context(), configMap(name, nil), metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		if !apierrors.IsServiceUnavailable(err) && !apierrors.IsServerTimeout(err) && !apierrors.IsInternalError(err) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// A single member restarted from its data dir keeps every object (the log
// is replayed after the last snapshot) and serves the same bytes.
func TestSingleMemberRestartKeepsObjects(t *testing.T) {
	c := newTestCluster(t, 1, nil)
	ctx := t.Context()
	for i := range 20 {
		if _, err := c.clients[0].CoreV1().ConfigMaps("default").Create(ctx, configMap(fmt.Sprintf("keep-%d", i), map[string]string{"i": strconv.Itoa(i)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.members[0].Store().Snapshot(); err != nil {
		t.Fatal(err)
	}
	for i := 20; i < 30; i++ { // some after the snapshot, replayed from the log
		if _, err := c.clients[0].CoreV1().ConfigMaps("default").Create(ctx, configMap(fmt.Sprintf("keep-%d", i), nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := c.sameObjects(ctx)
	c.stop(0)
	c.start(0)
	c.leader()
	var after []string
	eventually(t, 10*time.Second, func() error {
		var err error
		after, err = c.snapshotOf(ctx, 0)
		if err == nil && len(after) != len(before) {
			err = fmt.Errorf("%d objects, want %d", len(after), len(before))
		}
		return err
	})
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("after restart:\n%v\nbefore:\n%v", after, before)
	}
	ns, err := c.clients[0].CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil || len(ns.Items) != 4 { // default, kube-node-lease, kube-public, kube-system
		t.Fatalf("namespaces after restart: %v %v", ns, err)
	}
}

// A join with the wrong token is refused at once with a clear error, and
// leaves the cluster as it was.
func TestJoinWithWrongTokenIsRefused(t *testing.T) {
	c := newTestCluster(t, 1, nil)
	cfg := c.cfgs[0]
	cfg.ID, cfg.DataDir = "intruder", t.TempDir()
	cfg.APIAddr, cfg.Store.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Join, cfg.JoinToken = c.members[0].URL(), "not-the-token"
	start := time.Now()
	m, err := Start(t.Context(), cfg)
	if err == nil {
		m.Close()
		t.Fatal("joined with a wrong token")
	}
	if !strings.Contains(err.Error(), "401") || time.Since(start) > 10*time.Second {
		t.Fatalf("want a prompt 401 refusal, got after %v: %v", time.Since(start), err)
	}
	ms, err := c.members[0].Store().Members()
	if err != nil || len(ms) != 1 {
		t.Fatalf("members after a refused join: %v %v", ms, err)
	}
}

// A follower restarted with its data on another Raft address (a new pod
// IP; here a port chosen at run time) announces it and catches up.
func TestFollowerRestartedOnNewRaftAddress(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	ctx := t.Context()
	f := c.follower()
	old := c.members[f].Store().RaftAddr()
	c.stop(f)
	if _, err := c.clients[c.leader()].CoreV1().ConfigMaps("default").Create(ctx, configMap("while-away", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.cfgs[f].Store.RaftAddr = "127.0.0.1:0"
	c.start(f)
	now := c.members[f].Store().RaftAddr()
	if now == old {
		t.Fatalf("restarted on the same Raft address %s", old)
	}
	eventually(t, 20*time.Second, func() error {
		ms, err := c.members[c.leader()].Store().Members()
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.ID == c.cfgs[f].ID && m.RaftAddr != now {
				return fmt.Errorf("the configuration has %s at %s", m.ID, m.RaftAddr)
			}
		}
		if _, err := c.clients[f].CoreV1().ConfigMaps("default").Get(ctx, "while-away", metav1.GetOptions{ResourceVersion: "0"}); err != nil {
			return err
		}
		return nil
	})
}

// A member started with Nonvoter joins without a vote, gets every write,
// and is removed like any member.
func TestNonvoterJoinsAndIsRemoved(t *testing.T) {
	c := newTestCluster(t, 2, nil)
	ctx := t.Context()
	cfg := c.cfgs[1]
	cfg.ID, cfg.DataDir = "reader", filepath.Join(c.base, "reader")
	cfg.APIAddr, cfg.Store.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Join, cfg.Nonvoter = c.members[1].URL(), true // through a follower or the leader
	c.cfgs, c.members = append(c.cfgs, cfg), append(c.members, nil)
	c.clients, c.transps = append(c.clients, nil), append(c.transps, nil)
	c.start(2)
	leader := c.members[c.leader()].Store()
	eventually(t, 10*time.Second, func() error {
		ms, err := leader.Membership()
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.ID == "reader" && m.Suffrage == raftstore.Nonvoter {
				return nil
			}
		}
		return fmt.Errorf("membership %+v", ms)
	})
	if _, err := c.clients[0].CoreV1().ConfigMaps("default").Create(ctx, configMap("for-reader", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		_, err := c.clients[2].CoreV1().ConfigMaps("default").Get(ctx, "for-reader", metav1.GetOptions{ResourceVersion: "0"})
		return err
	})
	if err := leader.RemoveMember(ctx, "reader"); err != nil {
		t.Fatal(err)
	}
	ms, err := leader.Membership()
	if err != nil || len(ms) != 2 {
		t.Fatalf("membership after removing the nonvoter: %+v %v", ms, err)
	}
}

// A join given the cluster CA's hash verifies the member it joins through:
// the right hash joins; another is refused before the token is sent.
func TestJoinWithCAHash(t *testing.T) {
	c := newTestCluster(t, 1, nil)
	sec, _, err := datadir.LoadSecrets(c.cfgs[0].DataDir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := datadir.NewSecrets("", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	join := func(id, hash string) (*Member, error) {
		cfg := c.cfgs[0]
		cfg.ID, cfg.DataDir = id, filepath.Join(c.base, id)
		cfg.APIAddr, cfg.Store.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
		cfg.Join, cfg.CAHash = c.members[0].URL(), hash
		return Start(t.Context(), cfg)
	}
	if m, err := join("wrong", caHashOf(other.CACert)); err == nil {
		m.Close()
		t.Fatal("joined a cluster whose CA has another hash")
	} else if !strings.Contains(err.Error(), "not joining it") {
		t.Fatalf("want a clear refusal, got %v", err)
	}
	m, err := join("right", caHashOf(sec.CACert))
	if err != nil {
		t.Fatalf("join with the cluster CA's hash: %v", err)
	}
	defer m.Close()
	c.waitMembers(2)
}
