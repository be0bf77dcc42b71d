package member_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/member/membertest"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// A write sent to a follower is forwarded to the leader and readable on
// every member right after it is acknowledged.
func TestWriteOnFollowerReadableEverywhere(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	ctx := t.Context()
	f := c.Follower()
	created, err := c.PlainClientset(f).CoreV1().ConfigMaps("default").Create(ctx, configMap("via-follower", map[string]string{"a": "1"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create on follower %d: %v", f, err)
	}
	for i := range c.N() {
		got, err := c.PlainClientset(i).CoreV1().ConfigMaps("default").Get(ctx, "via-follower", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
		if got.ResourceVersion != created.ResourceVersion || got.UID != created.UID || got.Data["a"] != "1" {
			t.Fatalf("member %d has %s/%s %v, want %s/%s", i, got.ResourceVersion, got.UID, got.Data, created.ResourceVersion, created.UID)
		}
	}
	// Updates and deletes through a follower too.
	created.Data["a"] = "2"
	if _, err := c.PlainClientset(f).CoreV1().ConfigMaps("default").Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update on follower: %v", err)
	}
	if err := c.PlainClientset(f).CoreV1().ConfigMaps("default").Delete(ctx, "via-follower", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete on follower: %v", err)
	}
	for i := range c.N() {
		if _, err := c.PlainClientset(i).CoreV1().ConfigMaps("default").Get(ctx, "via-follower", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("member %d after delete: %v", i, err)
		}
	}
	sameObjects(t, c, ctx)
}

// A consistent read on a follower right after a write on the leader sees
// the write, every time (read-index).
func TestConsistentReadOnFollowerAfterLeaderWrite(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	ctx := t.Context()
	l := c.WaitLeader()
	for n := range 50 {
		f := (l + 1 + n%2) % 3
		name := "rw-" + strconv.Itoa(n)
		cm, err := c.PlainClientset(l).CoreV1().ConfigMaps("default").Create(ctx, configMap(name, nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.PlainClientset(f).CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("write %d: follower %d does not see it: %v", n, f, err)
		}
		if got.ResourceVersion != cm.ResourceVersion {
			t.Fatalf("follower %d: rv %s, want %s", f, got.ResourceVersion, cm.ResourceVersion)
		}
		l2, err := c.PlainClientset(f).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
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
	sameObjects(t, c, ctx)
}

// The leader stops; a new leader is elected and writes continue; the old
// leader restarts from its data dir and catches up.
func TestLeaderFailoverAndRestart(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	ctx := t.Context()
	old := c.WaitLeader()
	for i := range 10 {
		if _, err := c.PlainClientset(old).CoreV1().ConfigMaps("default").Create(ctx, configMap(fmt.Sprintf("before-%d", i), nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.Stop(old)
	nl := c.WaitLeader()
	if nl == old {
		t.Fatal("stopped member still leads")
	}
	for i := range 10 {
		via := (old + 1 + i%2) % 3 // through the new leader and the other follower
		if err := createWithRetry(t, c, via, fmt.Sprintf("after-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	c.Restart(old)
	want := sameObjects(t, c, ctx)
	if len(want) != 20 {
		t.Fatalf("want 20 configmaps on every member, got %d: %v", len(want), want)
	}
}

// A member down while the leader compacts its log catches up through a
// snapshot install when it restarts.
func TestRestartedMemberCatchesUpThroughSnapshot(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft, func(cfg *member.Config) {
		cfg.Store.SnapshotThreshold = 16
		cfg.Store.TrailingLogs = 4
	})
	ctx := t.Context()
	down := c.Follower()
	c.Stop(down)
	l := c.WaitLeader()
	for i := range 60 {
		if _, err := c.PlainClientset(l).CoreV1().ConfigMaps("default").Create(ctx, configMap(fmt.Sprintf("cm-%02d", i), map[string]string{"i": strconv.Itoa(i)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Member(l).Store().Snapshot(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	c.Restart(down)
	want := sameObjects(t, c, ctx)
	if len(want) != 60 {
		t.Fatalf("want 60 configmaps, got %d", len(want))
	}
	stats := c.Member(down).Store().Stats()
	if stats["last_snapshot_index"] == "0" {
		t.Fatalf("restarted member caught up without a snapshot install: %v", stats)
	}
}

func createWithRetry(t *testing.T, c *membertest.Cluster, i int, name string) error {
	t.Helper()
	var err error
	for range 50 {
		_, err = c.PlainClientset(i).CoreV1().ConfigMaps("default").Create(t.Context(), configMap(name, nil), metav1.CreateOptions{})
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
	c := membertest.StartCluster(t, 1, membertest.FastRaft)
	ctx := t.Context()
	for i := range 20 {
		if _, err := c.PlainClientset(0).CoreV1().ConfigMaps("default").Create(ctx, configMap(fmt.Sprintf("keep-%d", i), map[string]string{"i": strconv.Itoa(i)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Member(0).Store().Snapshot(); err != nil {
		t.Fatal(err)
	}
	for i := 20; i < 30; i++ { // some after the snapshot, replayed from the log
		if _, err := c.PlainClientset(0).CoreV1().ConfigMaps("default").Create(ctx, configMap(fmt.Sprintf("keep-%d", i), nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := sameObjects(t, c, ctx)
	c.Stop(0)
	c.Restart(0)
	c.WaitLeader()
	var after []string
	membertest.Eventually(t, 10*time.Second, func() error {
		var err error
		after, err = snapshotOf(ctx, c, 0)
		if err == nil && len(after) != len(before) {
			err = fmt.Errorf("%d objects, want %d", len(after), len(before))
		}
		return err
	})
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("after restart:\n%v\nbefore:\n%v", after, before)
	}
	ns, err := c.PlainClientset(0).CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil || len(ns.Items) != 4 { // default, kube-node-lease, kube-public, kube-system
		t.Fatalf("namespaces after restart: %v %v", ns, err)
	}
}

// A join with the wrong token is refused at once with a clear error, and
// leaves the cluster as it was.
func TestJoinWithWrongTokenIsRefused(t *testing.T) {
	c := membertest.StartCluster(t, 1, membertest.FastRaft)
	cfg := c.Config(0)
	cfg.ID, cfg.DataDir = "intruder", t.TempDir()
	cfg.APIAddr, cfg.Store.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Join, cfg.JoinToken = c.Member(0).URL(), "not-the-token"
	start := time.Now()
	m, err := member.Start(t.Context(), cfg)
	if err == nil {
		m.Close()
		t.Fatal("joined with a wrong token")
	}
	if !strings.Contains(err.Error(), "401") || time.Since(start) > 10*time.Second {
		t.Fatalf("want a prompt 401 refusal, got after %v: %v", time.Since(start), err)
	}
	ms, err := c.Member(0).Store().Members()
	if err != nil || len(ms) != 1 {
		t.Fatalf("members after a refused join: %v %v", ms, err)
	}
}

// A follower restarted with its data on another Raft address (a new pod
// IP; here a port chosen at run time) announces it and catches up.
func TestFollowerRestartedOnNewRaftAddress(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	ctx := t.Context()
	f := c.Follower()
	old := c.Member(f).Store().RaftAddr()
	c.Stop(f)
	if _, err := c.PlainClientset(c.WaitLeader()).CoreV1().ConfigMaps("default").Create(ctx, configMap("while-away", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Configure(f, func(cfg *member.Config) { cfg.Store.RaftAddr = "127.0.0.1:0" })
	c.Restart(f)
	now := c.Member(f).Store().RaftAddr()
	if now == old {
		t.Fatalf("restarted on the same Raft address %s", old)
	}
	membertest.Eventually(t, 20*time.Second, func() error {
		ms, err := c.Member(c.WaitLeader()).Store().Members()
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.ID == c.Config(f).ID && m.RaftAddr != now {
				return fmt.Errorf("the configuration has %s at %s", m.ID, m.RaftAddr)
			}
		}
		if _, err := c.PlainClientset(f).CoreV1().ConfigMaps("default").Get(ctx, "while-away", metav1.GetOptions{ResourceVersion: "0"}); err != nil {
			return err
		}
		return nil
	})
}

// A member started with Nonvoter joins without a vote, gets every write,
// and is removed like any member.
func TestNonvoterJoinsAndIsRemoved(t *testing.T) {
	c := membertest.StartCluster(t, 2, membertest.FastRaft)
	ctx := t.Context()
	cfg := c.Config(1)
	cfg.ID, cfg.DataDir = "reader", filepath.Join(c.Dir(), "reader")
	cfg.APIAddr, cfg.Store.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Join, cfg.Nonvoter = c.Member(1).URL(), true // through a follower or the leader
	c.Add(cfg)
	leader := c.Member(c.WaitLeader()).Store()
	membertest.Eventually(t, 10*time.Second, func() error {
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
	if _, err := c.PlainClientset(0).CoreV1().ConfigMaps("default").Create(ctx, configMap("for-reader", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		_, err := c.PlainClientset(2).CoreV1().ConfigMaps("default").Get(ctx, "for-reader", metav1.GetOptions{ResourceVersion: "0"})
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
	c := membertest.StartCluster(t, 1, membertest.FastRaft)
	sec, _, err := datadir.LoadSecrets(c.Config(0).DataDir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := datadir.NewSecrets("", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	join := func(id, hash string) (*member.Member, error) {
		cfg := c.Config(0)
		cfg.ID, cfg.DataDir = id, filepath.Join(c.Dir(), id)
		cfg.APIAddr, cfg.Store.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
		cfg.Join, cfg.CAHash = c.Member(0).URL(), hash
		return member.Start(t.Context(), cfg)
	}
	if m, err := join("wrong", member.CAHashOf(other.CACert)); err == nil {
		m.Close()
		t.Fatal("joined a cluster whose CA has another hash")
	} else if !strings.Contains(err.Error(), "not joining it") {
		t.Fatalf("want a clear refusal, got %v", err)
	}
	m, err := join("right", member.CAHashOf(sec.CACert))
	if err != nil {
		t.Fatalf("join with the cluster CA's hash: %v", err)
	}
	defer m.Close()
	c.WaitMembers(2)
}
