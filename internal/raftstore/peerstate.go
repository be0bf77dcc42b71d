package raftstore

import (
	"log/slog"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// DefaultPeerDownReminder is how often the leader repeats that a peer is
// still down (Config.PeerDownReminder).
const DefaultPeerDownReminder = 5 * time.Minute

// peerWatch turns hashicorp/raft's heartbeat observations into a peer's
// state changes in the log: one WARN when the leader's heartbeats to a
// peer start failing, a WARN reminder every remind while they keep
// failing, one INFO when the peer answers again. hashicorp/raft itself
// logs an ERROR for every failed heartbeat (about 240 a minute for a
// down peer at litek8s's timings); slogWriter demotes those to DEBUG.
//
// It runs in the filter of a Raft observer (no channel, no goroutine):
// heartbeat goroutines of several peers call observe concurrently, so mu
// guards down. mu is a leaf lock.
type peerWatch struct {
	log    *slog.Logger
	remind time.Duration

	mu   sync.Mutex
	down map[raft.ServerID]*downPeer
}

// downPeer is a peer the leader's heartbeats fail to reach.
type downPeer struct {
	since, reminded time.Time
	failures        int
	// announced: the WARN is out (a single lost heartbeat on a busy
	// machine is no peer down: it takes downAfter failures in a row).
	announced bool
}

// downAfter is how many heartbeats in a row must fail before a peer is
// said to be down (Raft retries a failed one after 10 to 20 ms at first).
const downAfter = 3

func newPeerWatch(log *slog.Logger, remind time.Duration) *peerWatch {
	if remind <= 0 {
		remind = DefaultPeerDownReminder
	}
	return &peerWatch{log: log, remind: remind, down: map[raft.ServerID]*downPeer{}}
}

// observe is the observer's filter: it logs what changed and keeps no
// observation.
func (w *peerWatch) observe(o *raft.Observation) bool {
	now := time.Now()
	switch d := o.Data.(type) {
	case raft.FailedHeartbeatObservation:
		w.failed(d.PeerID, d.LastContact, now)
	case raft.ResumedHeartbeatObservation:
		w.resumed(d.PeerID, now)
	case raft.LeaderObservation:
		// Heartbeats are the leader's: a peer's state from an earlier
		// term says nothing now (a new term's failures log it again).
		w.mu.Lock()
		clear(w.down)
		w.mu.Unlock()
	case raft.PeerObservation:
		if d.Removed {
			w.mu.Lock()
			delete(w.down, d.Peer.ID)
			w.mu.Unlock()
		}
	}
	return false
}

func (w *peerWatch) failed(id raft.ServerID, lastContact, now time.Time) {
	w.mu.Lock()
	p, known := w.down[id]
	if !known {
		p = &downPeer{since: now}
		w.down[id] = p
	}
	p.failures++
	announce := !p.announced && p.failures >= downAfter
	remind := p.announced && now.Sub(p.reminded) >= w.remind
	if announce {
		p.announced = true
	}
	if announce || remind {
		p.reminded = now
	}
	since, failures := p.since, p.failures
	w.mu.Unlock()
	last := "never"
	if !lastContact.IsZero() {
		last = now.Sub(lastContact).Round(time.Millisecond).String()
	}
	switch {
	case announce:
		w.log.Warn("peer down: heartbeats to it fail; it is retried, and logged again when it answers",
			"component", "raft", "peer", string(id), "last_contact_ago", last)
	case remind:
		w.log.Warn("peer still down", "component", "raft", "peer", string(id),
			"down_for", now.Sub(since).Round(time.Second).String(), "failed_heartbeats", failures)
	}
}

func (w *peerWatch) resumed(id raft.ServerID, now time.Time) {
	w.mu.Lock()
	p, known := w.down[id]
	delete(w.down, id)
	w.mu.Unlock()
	if known && p.announced {
		w.log.Info("peer back: heartbeats to it succeed again", "component", "raft", "peer", string(id),
			"down_for", now.Sub(p.since).Round(time.Millisecond).String(), "failed_heartbeats", p.failures)
	}
}
