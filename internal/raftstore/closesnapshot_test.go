package raftstore

import (
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/kv"
)

// newestSnapshot returns the index of the newest snapshot in dir (0: none).
func newestSnapshot(t *testing.T, dir string) uint64 {
	t.Helper()
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	list, err := snaps.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		return 0
	}
	return list[0].Index
}

// A member stopped with a long log since its last snapshot takes one as it
// stops, so that its next start restores everything from it instead of
// replaying the log; with a short one it does not.
func TestSnapshotBeforeClose(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) { cfg.SnapshotThreshold = 64 })
	for gen := range 100 {
		op := kv.OpUpdate
		if gen == 0 {
			op = kv.OpCreate
		}
		c.propose(cmWrite(op, "ns", "a", gen))
	}
	c.checkConsistent()
	rev := c.store(1).Revision()
	if got := newestSnapshot(t, c.members[1].dir); got != 0 {
		t.Fatalf("a snapshot at %d before the stop: the test needs none", got)
	}
	c.Stop(1)
	if got := newestSnapshot(t, c.members[1].dir); got != rev {
		t.Fatalf("after a stop at revision %d (%d entries since no snapshot, threshold 64), newest snapshot %d", rev, rev, got)
	}
	c.start(c.members[1])
	if got := c.store(1).Revision(); got < rev {
		t.Errorf("restarted at revision %d, want the snapshot's %d at once", got, rev)
	}
	for gen := range 10 {
		c.propose(cmWrite(kv.OpUpdate, "ns", "a", 100+gen))
	}
	c.checkConsistent()
	c.Stop(1)
	if got := newestSnapshot(t, c.members[1].dir); got != rev {
		t.Errorf("after 10 more entries (threshold 64) the newest snapshot is at %d, want still %d", got, rev)
	}
	c.start(c.members[1])
	c.checkConsistent()
}
