package raftstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"time"

	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/httpx"
	"github.com/litek8s/litek8s/internal/kv"
)

// membersResource holds one record per member (its addresses). It is stored
// and replicated like any object but never served by the API.
const membersResource = "_members"

// Member is one member of the cluster.
type Member struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raftAddr"`
	APIURL   string `json:"apiURL"`
	// Nonvoter asks, when joining, to join without a vote (a member that
	// serves reads and never counts for a quorum).
	Nonvoter bool `json:"nonvoter,omitempty"`
}

func (s *Store) self() Member {
	return Member{ID: s.cfg.ID, RaftAddr: s.RaftAddr(), APIURL: s.cfg.APIURL, Nonvoter: s.cfg.Nonvoter}
}

// member returns the recorded member id, if any.
func (s *Store) member(id string) (Member, bool) {
	obj, _ := s.fsm.get(kv.Key{Resource: membersResource, Name: id})
	var m Member
	if obj == nil || json.Unmarshal(obj.Raw, &m) != nil {
		return m, false
	}
	return m, true
}

// recordMember stores m's addresses unless they are already recorded.
// Leader only.
func (s *Store) recordMember(ctx context.Context, m Member) error {
	if cur, ok := s.member(m.ID); ok && cur == m {
		return nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return s.put(ctx, kv.Key{Resource: membersResource, Name: m.ID}, raw)
}

// put creates the record at key, or replaces it if it exists. Leader only.
func (s *Store) put(ctx context.Context, key kv.Key, raw []byte) error {
	_, err := s.Propose(ctx, kv.Write{Op: kv.OpCreate, Key: key, Object: raw})
	if errors.Is(err, kv.ErrAlreadyExists) {
		_, err = s.Propose(ctx, kv.Write{Op: kv.OpUpdate, Key: key, Object: raw})
	}
	return err
}

// Leader returns the API URL of the current leader and whether it is this
// member. ok is false while no leader is known.
func (s *Store) Leader() (apiURL string, self bool, ok bool) {
	_, id := s.raft.LeaderWithID()
	if id == "" {
		return "", false, false
	}
	if string(id) == s.cfg.ID {
		return s.cfg.APIURL, true, true
	}
	m, found := s.member(string(id))
	if !found {
		return "", false, false
	}
	return m.APIURL, false, true
}

// WaitLeader blocks until a leader with a known API URL exists.
func (s *Store) WaitLeader(ctx context.Context) (apiURL string, self bool, err error) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if u, me, ok := s.Leader(); ok {
			return u, me, nil
		}
		select {
		case <-ctx.Done():
			return "", false, kv.ErrNoLeader
		case <-t.C:
		}
	}
}

// addMember adds m as a voter and records its addresses. A member already
// in the configuration under another address (restarted elsewhere: a new
// pod IP, a port chosen at run time) keeps its suffrage and gets its new
// address: hashicorp/raft's AddVoter and AddNonvoter update the address of
// a server they already have. Leader only.
func (s *Store) addMember(ctx context.Context, m Member) error {
	if m.ID == "" || m.RaftAddr == "" || m.APIURL == "" {
		return errors.New("raftstore: join needs id, raftAddr and apiURL")
	}
	cf := s.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return mapRaftError(err)
	}
	add := s.raft.AddVoter
	for _, srv := range cf.Configuration().Servers {
		if srv.ID != raft.ServerID(m.ID) {
			continue
		}
		if srv.Address == raft.ServerAddress(m.RaftAddr) {
			add = nil // nothing to change in Raft
		} else if srv.Suffrage == raft.Nonvoter {
			add = s.raft.AddNonvoter
		}
	}
	if add != nil {
		if err := add(raft.ServerID(m.ID), raft.ServerAddress(m.RaftAddr), 0, s.cfg.ApplyTimeout).Error(); err != nil {
			return fmt.Errorf("raftstore: add %s: %w", m.ID, mapRaftError(err))
		}
	}
	return s.recordMember(ctx, m)
}

// Reannounce runs on a member restarted with its data until it knows a
// leader: while the Raft address its record holds is not the one it
// listens on now, the leader cannot reach it, so it asks the other
// recorded members to join it again under its new address (one of them
// forwards that to the leader).
func (s *Store) Reannounce(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	logged := s.loggedMembers() // the records in the log, applied or not
	for {
		if _, _, ok := s.Leader(); ok {
			return
		}
		self := s.self()
		known := maps.Clone(logged)
		for _, m := range s.recordedMembers() { // those of the snapshot
			known[m.ID] = m
		}
		if rec, ok := known[self.ID]; ok && rec != self {
			for _, m := range known {
				if m.ID == self.ID {
					continue
				}
				err := callMember(ctx, s.cfg.Peer, m.APIURL, "", http.MethodPost, pathJoin, self, nil)
				if err == nil {
					s.log.Info("announced a new Raft address", "recorded", rec.RaftAddr, "now", self.RaftAddr, "through", m.ID)
					break
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// recordedMembers returns every member record in the store.
func (s *Store) recordedMembers() []Member {
	l := s.fsm.list(membersResource, "")
	var out []Member
	l.Range("", func(obj *kv.Object) bool {
		var m Member
		if json.Unmarshal(obj.Raw, &m) == nil {
			out = append(out, m)
		}
		return true
	})
	return out
}

// Members returns the members of the Raft configuration with their
// recorded addresses.
func (s *Store) Members() ([]Member, error) {
	cf := s.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return nil, mapRaftError(err)
	}
	var out []Member
	for _, srv := range cf.Configuration().Servers {
		m, _ := s.member(string(srv.ID))
		m.ID, m.RaftAddr = string(srv.ID), string(srv.Address)
		out = append(out, m)
	}
	return out, nil
}

// loggedMembers returns the member records of the log entries this member
// holds, newest per ID: a restarted member applies the entries after its
// latest snapshot only once a leader tells it they are committed.
func (s *Store) loggedMembers() map[string]Member {
	out := map[string]Member{}
	first, err1 := s.logs.FirstIndex()
	last, err2 := s.logs.LastIndex()
	if err1 != nil || err2 != nil || first == 0 {
		return out
	}
	var l raft.Log
	for i := first; i <= last; i++ {
		if s.logs.GetLog(i, &l) != nil || l.Type != raft.LogCommand {
			continue
		}
		w, err := decodeRecord(l.Data)
		if err != nil || w.Key.Resource != membersResource || w.Op == kv.OpDelete {
			continue
		}
		var m Member
		if json.Unmarshal(w.Object, &m) == nil && m.ID != "" {
			out[m.ID] = m
		}
	}
	return out
}

// Removed reports whether this member was removed from the Raft
// configuration (`ctl members remove`, or the leader's dead-member
// cleanup, autopilot.go): the configuration it knows does not hold it, or
// the leader told it so (pathRemoved) and it has received no entry since
// (hashicorp/raft does not always deliver the entry that removes a
// follower, which then campaigns in vain). A member that has no
// configuration yet (a fresh one about to join) is not removed; one added
// back is not either. A member that was down when it was removed is not
// told: it campaigns until an operator stops it.
func (s *Store) Removed() bool {
	if at := s.removedAt.Load(); at != 0 && s.raft.LastIndex() < at {
		return true
	}
	cf := s.raft.GetConfiguration()
	if cf.Error() != nil {
		return false
	}
	servers := cf.Configuration().Servers
	if len(servers) == 0 {
		return false
	}
	for _, srv := range servers {
		if srv.ID == raft.ServerID(s.cfg.ID) {
			return false
		}
	}
	return true
}

// pathRemoved is where the leader tells a member it removed it.
const pathRemoved = "/internal/v1/removed"

// removedNotice is the body of a pathRemoved call.
type removedNotice struct {
	ID string `json:"id"`
	// Index is the index of the configuration entry that removed ID.
	Index uint64 `json:"index"`
}

func (s *Store) serveRemoved(w http.ResponseWriter, r *http.Request) error {
	var n removedNotice
	if err := decodeBody(r, &n); err != nil || n.ID != s.cfg.ID || n.Index == 0 {
		return httpx.Errorf(http.StatusBadRequest, "bad removal notice for member %s", s.cfg.ID)
	}
	for {
		cur := s.removedAt.Load()
		if n.Index <= cur || s.removedAt.CompareAndSwap(cur, n.Index) {
			break
		}
	}
	httpx.WriteJSON(w, http.StatusOK, struct{}{})
	return nil
}

// noticeTimeout bounds how long the leader tries to tell a member it
// removed it (a dead member does not answer).
const noticeTimeout = 2 * time.Second

// tellRemoved tells member m, best effort, that the configuration entry at
// index removed it.
func (s *Store) tellRemoved(ctx context.Context, m Member, index uint64) {
	if m.APIURL == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	if err := callMember(ctx, s.cfg.Peer, m.APIURL, "", http.MethodPost, pathRemoved,
		removedNotice{ID: m.ID, Index: index}, nil); err != nil {
		s.log.Debug("could not tell a removed member", "id", m.ID, "err", err)
	}
}
