package raftstore

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log destination several goroutines write to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// from returns what was written from offset on.
func (b *syncBuffer) from(offset int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()[offset:]
}

func (b *syncBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

// With one of three members stopped for a minute, the leader logs a
// handful of lines about it: one WARN when it goes down, a reminder every
// PeerDownReminder (20s here), one INFO when it is back; hashicorp/raft's
// ERROR per failed heartbeat (hundreds a minute) is gone. The stopped
// member's clean shutdown logs no ERROR, nor does the leader's.
func TestPeerDownLogsAFewLines(t *testing.T) {
	const reminder = 20 * time.Second
	logs := map[string]*syncBuffer{}
	var mu sync.Mutex
	c := newTestCluster(t, 3, func(cfg *Config) {
		mu.Lock()
		defer mu.Unlock()
		if logs[cfg.ID] == nil {
			logs[cfg.ID] = &syncBuffer{}
		}
		cfg.Logger = slog.New(slog.NewTextHandler(logs[cfg.ID], nil)) // info and up, as cmd/node logs
		cfg.PeerDownReminder = reminder
		// Production timings: the test's faster ones let leadership move
		// on a loaded machine, and the count is of one leader's lines.
		def := DefaultConfig()
		cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = def.HeartbeatTimeout, def.ElectionTimeout, def.LeaderLeaseTimeout
	})
	l := c.WaitLeader()
	v := (l + 1) % 3
	leader, victim := c.members[l], c.members[v]
	mu.Lock()
	leaderLog, victimLog := logs[leader.id], logs[victim.id]
	mu.Unlock()
	leaderMark, victimMark := leaderLog.Len(), victimLog.Len()

	c.Stop(v)
	if shutdown := victimLog.from(victimMark); strings.Contains(shutdown, "level=ERROR") {
		t.Errorf("%s's clean shutdown logged errors:\n%s", victim.id, shutdown)
	}
	// A minute down, with writes going on (replication to it fails too).
	down := time.Now()
	for i := 0; time.Since(down) < time.Minute; i++ {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		if _, err := leader.store.Propose(ctx, namespaceWrite(fmt.Sprintf("ns-%d", i))); err != nil {
			t.Logf("write %d: %v", i, err) // traffic only: the count below is what is checked
		}
		cancel()
		time.Sleep(2 * time.Second)
	}
	c.start(victim)
	eventually(t, 20*time.Second, func() error {
		if !strings.Contains(leaderLog.from(leaderMark), "peer back") {
			return fmt.Errorf("the leader has not logged %s back", victim.id)
		}
		return nil
	})
	if now := c.WaitLeader(); now != l {
		t.Fatalf("leadership moved from %s to %s while one member was down: the count below is of neither", leader.id, c.members[now].id)
	}

	about := regexp.MustCompile(`\b` + victim.id + `\b|` + regexp.QuoteMeta(victim.raftAddr))
	var lines []string
	for _, line := range strings.Split(leaderLog.from(leaderMark), "\n") {
		if about.MatchString(line) {
			lines = append(lines, line)
		}
	}
	all := strings.Join(lines, "\n")
	count := func(s string) int { return strings.Count(all, s) }
	if n := count("peer down"); n != 1 {
		t.Errorf("%d \"peer down\" lines, want 1", n)
	}
	if n := count("peer back"); n != 1 {
		t.Errorf("%d \"peer back\" lines, want 1", n)
	}
	// Down a minute and a bit: reminders at 20s and 40s, perhaps 60s.
	if n := count("peer still down"); n < 2 || n > 3 {
		t.Errorf("%d reminders in a minute down at one every %s, want 2 or 3", n, reminder)
	}
	if len(lines) > 1+3+1 {
		t.Errorf("the leader logged %d lines about %s down for a minute, want at most 5:\n%s", len(lines), victim.id, all)
	}
	if strings.Contains(all, "level=ERROR") {
		t.Errorf("errors about a stopped peer:\n%s", all)
	}
	t.Logf("the leader's lines about %s:\n%s", victim.id, all)

	// The leader's clean shutdown (it hands leadership over, then stops)
	// logs no ERROR either, nor do the others about it.
	marks := map[string]int{}
	for id, b := range logs {
		marks[id] = b.Len()
	}
	c.Stop(l)
	c.WaitLeader(l)
	for id, b := range logs {
		if out := b.from(marks[id]); strings.Contains(out, "level=ERROR") {
			t.Errorf("%s logged errors around the leader's clean shutdown:\n%s", id, out)
		}
	}
}

// demote keeps raft's lines at their level but for the per-peer failures
// and connections a member closed.
func TestDemoteRaftLines(t *testing.T) {
	for _, c := range []struct {
		line string
		in   slog.Level
		want slog.Level
	}{
		{`raft: failed to heartbeat to: peer=127.0.0.1:7002 backoff time=250ms error="dial tcp 127.0.0.1:7002: connect: connection refused"`, slog.LevelError, slog.LevelDebug},
		{`raft: failed to appendEntries to: peer="{Voter m1 127.0.0.1:7002}" error="dial tcp: connection refused"`, slog.LevelError, slog.LevelDebug},
		{`raft: failed to contact: server-id=m1 time=1.2s`, slog.LevelWarn, slog.LevelDebug},
		{`raft: failed to contact quorum of nodes, stepping down`, slog.LevelWarn, slog.LevelWarn},
		{`raft: failed to decode incoming command: error="read tcp 127.0.0.1:7001->127.0.0.1:5555: read: connection reset by peer"`, slog.LevelError, slog.LevelDebug},
		{`raft: failed to decode incoming command: error="msgpack decode error: invalid"`, slog.LevelError, slog.LevelError},
		{`raft: failed to make requestVote RPC: target="{Voter m1 x}" error="dial tcp: refused" term=3`, slog.LevelError, slog.LevelDebug},
		{`raft: failed to decode incoming command: error="transport shutdown"`, slog.LevelError, slog.LevelDebug},
		{`raft: peer has newer term, stopping replication: peer="{Voter m1 127.0.0.1:7002}"`, slog.LevelError, slog.LevelInfo},
		{`raft: failed to send snapshot to: peer="{Voter m1 x}" error="x"`, slog.LevelError, slog.LevelError},
		{`raft: entering leader state: leader="Node at 127.0.0.1:7001 [Leader]"`, slog.LevelInfo, slog.LevelInfo},
	} {
		if got := demote(c.line, c.in); got != c.want {
			t.Errorf("%s at %s: got %s, want %s", c.line, c.in, got, c.want)
		}
	}
}
