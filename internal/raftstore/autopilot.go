package raftstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/kv"
)

// Dead-member cleanup, as Consul's and Vault's autopilot do it: with
// Config.DeadMemberTimeout set, the leader removes from the Raft
// configuration a member it has not reached for that long (a StatefulSet
// scaled down, a machine gone), one at a time, never leaving fewer than
// Config.MinQuorum voters. A member counts as reached while Raft's
// heartbeats to it succeed or while it reports its applied index (lag.go):
// it is removed only when both have failed for the timeout. A new leader
// counts every member as reached when its term began, so an election never
// removes anyone sooner than the timeout.
//
// Every removal (this one, or an administrator's) leaves a record of why
// and when in the store (removalsResource), which `ctl members list`
// shows until the member is added again.
//
// State: the loop's own variables only; it runs on the leader for one term
// (becomeLeader).

// removalsResource holds one Removal per member removed from the
// configuration. Like membersResource it is replicated but never served by
// the API nor kept in backups.
const removalsResource = "_removed"

// Removal says why and when a member was removed from the configuration.
type Removal struct {
	ID     string    `json:"id"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// memberContact is what the cleanup decision knows of one member.
type memberContact struct {
	ID    string
	Voter bool
	// LastContact is when the leader last reached the member.
	LastContact time.Time
}

// deadMembers decides which members to remove at now: those other than
// self not reached for longer than timeout, the longest unreached first,
// leaving at least minQuorum voters (a dead nonvoter is always removed).
// timeout <= 0 removes nobody.
func deadMembers(members []memberContact, self string, now time.Time, timeout time.Duration, minQuorum int) []string {
	if timeout <= 0 {
		return nil
	}
	voters := 0
	var dead []memberContact
	for _, m := range members {
		if m.Voter {
			voters++
		}
		if m.ID != self && now.Sub(m.LastContact) > timeout {
			dead = append(dead, m)
		}
	}
	sort.Slice(dead, func(i, j int) bool {
		if !dead[i].LastContact.Equal(dead[j].LastContact) {
			return dead[i].LastContact.Before(dead[j].LastContact)
		}
		return dead[i].ID < dead[j].ID
	})
	var out []string
	for _, m := range dead {
		if m.Voter {
			if voters-1 < minQuorum {
				continue
			}
			voters--
		}
		out = append(out, m.ID)
	}
	return out
}

// autopilotCheckEvery is how often the leader looks for dead members: a
// quarter of the timeout, at most a second.
func autopilotCheckEvery(timeout time.Duration) time.Duration {
	return max(min(timeout/4, time.Second), 10*time.Millisecond)
}

// runAutopilot removes dead members while ctx (this member's term as
// leader) lasts. It returns at once when DeadMemberTimeout is 0.
func (s *Store) runAutopilot(ctx context.Context) {
	timeout := s.cfg.DeadMemberTimeout
	if timeout <= 0 {
		return
	}
	obsCh := make(chan raft.Observation, 64)
	obs := raft.NewObserver(obsCh, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.FailedHeartbeatObservation, raft.ResumedHeartbeatObservation:
			return true
		}
		return false
	})
	s.raft.RegisterObserver(obs)
	defer s.raft.DeregisterObserver(obs)
	start := time.Now()
	// failing holds, per member whose heartbeats fail, its last contact
	// (Raft's own, carried by each failure). A dropped observation is
	// repaired by the next failure; a dropped resumption only costs the
	// lag reports' say (contacts).
	failing := map[string]time.Time{}
	tick := time.NewTicker(autopilotCheckEvery(timeout))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case o := <-obsCh:
			switch d := o.Data.(type) {
			case raft.FailedHeartbeatObservation:
				failing[string(d.PeerID)] = d.LastContact
			case raft.ResumedHeartbeatObservation:
				delete(failing, string(d.PeerID))
			}
			continue
		case <-tick.C:
		}
		s.removeDead(ctx, start, failing)
	}
}

// removeDead removes the first member deadMembers picks, if any: one per
// check, so that each configuration change commits before the next is
// decided.
func (s *Store) removeDead(ctx context.Context, start time.Time, failing map[string]time.Time) {
	servers, err := s.servers()
	if err != nil {
		return
	}
	now := time.Now()
	contacts := s.contacts(servers, start, failing, now)
	dead := deadMembers(contacts, s.cfg.ID, now, s.cfg.DeadMemberTimeout, s.cfg.MinQuorum)
	if len(dead) == 0 {
		return
	}
	id := dead[0]
	i := slices.IndexFunc(contacts, func(c memberContact) bool { return c.ID == id })
	reason := fmt.Sprintf("dead: not reached for %s (dead-member timeout %s)",
		now.Sub(contacts[i].LastContact).Round(time.Millisecond), s.cfg.DeadMemberTimeout)
	if err := s.removeMember(ctx, id, reason); err != nil {
		if ctx.Err() == nil {
			s.log.Warn("dead-member cleanup: remove failed", "id", id, "err", err)
		}
		return
	}
	s.log.Info("removed a dead member", "id", id, "reason", reason, "minQuorum", s.cfg.MinQuorum)
}

// contacts returns, per server, when this leader last reached it: the
// latest of the term's start, Raft's last contact (now while heartbeats
// succeed) and the member's last lag report.
func (s *Store) contacts(servers []raft.Server, start time.Time, failing map[string]time.Time,
	now time.Time) []memberContact {
	term := s.raft.CurrentTerm()
	s.lag.mu.Lock()
	defer s.lag.mu.Unlock()
	out := make([]memberContact, 0, len(servers))
	for _, srv := range servers {
		id := string(srv.ID)
		last := now
		if t, ok := failing[id]; ok {
			last = t
		}
		if m := s.lag.members[id]; m != nil && s.lag.term == term && m.LastReport.After(last) {
			last = m.LastReport
		}
		if start.After(last) {
			last = start
		}
		out = append(out, memberContact{ID: id, Voter: srv.Suffrage == raft.Voter, LastContact: last})
	}
	return out
}

// recordRemoval stores why and when member id was removed. Leader only.
func (s *Store) recordRemoval(ctx context.Context, r Removal) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.put(ctx, kv.Key{Resource: removalsResource, Name: r.ID}, raw)
}

// Removals returns why and when each member that is no longer in the
// configuration was removed (as far as this member has applied), ordered
// by ID.
func (s *Store) Removals() ([]Removal, error) {
	servers, err := s.servers()
	if err != nil {
		return nil, err
	}
	in := map[string]bool{}
	for _, srv := range servers {
		in[string(srv.ID)] = true
	}
	var out []Removal
	s.fsm.list(removalsResource, "").Range("", func(obj *kv.Object) bool {
		var r Removal
		if json.Unmarshal(obj.Raw, &r) == nil && r.ID != "" && !in[r.ID] {
			out = append(out, r)
		}
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
