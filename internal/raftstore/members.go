package raftstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

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
}

func (s *Store) self() Member {
	return Member{ID: s.cfg.ID, RaftAddr: s.RaftAddr(), APIURL: s.cfg.APIURL}
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
	key := kv.Key{Resource: membersResource, Name: m.ID}
	_, err = s.Propose(ctx, kv.Write{Op: kv.OpCreate, Key: key, Object: raw})
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

// addMember adds m as a voter (replacing a stale entry of the same ID) and
// records its addresses. Leader only.
func (s *Store) addMember(ctx context.Context, m Member) error {
	if m.ID == "" || m.RaftAddr == "" || m.APIURL == "" {
		return errors.New("raftstore: join needs id, raftAddr and apiURL")
	}
	cf := s.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return mapRaftError(err)
	}
	present := false
	for _, srv := range cf.Configuration().Servers {
		if srv.ID == raft.ServerID(m.ID) {
			if srv.Address == raft.ServerAddress(m.RaftAddr) {
				present = true
				continue
			}
			if err := s.raft.RemoveServer(srv.ID, 0, s.cfg.ApplyTimeout).Error(); err != nil {
				return fmt.Errorf("raftstore: remove stale %s: %w", m.ID, mapRaftError(err))
			}
		}
	}
	if !present {
		f := s.raft.AddVoter(raft.ServerID(m.ID), raft.ServerAddress(m.RaftAddr), 0, s.cfg.ApplyTimeout)
		if err := f.Error(); err != nil {
			return fmt.Errorf("raftstore: add %s: %w", m.ID, mapRaftError(err))
		}
	}
	return s.recordMember(ctx, m)
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
