package raftstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/kv"
)

// Membership administration (what `ctl members` and `ctl leader` do). Every
// change runs on the leader and returns kv.ErrNotLeader elsewhere; the
// caller forwards it. A change returns once Raft has committed the new
// configuration.
//
// The leader never removes or demotes itself: hashicorp/raft shuts a leader
// down once it commits a configuration in which it has no vote, so such a
// request is refused with kv.ErrConflict and the operator transfers
// leadership first (`ctl leader transfer`), then asks the new leader.

// Suffrage is whether a member votes in elections and commits.
type Suffrage string

// Suffrages (hashicorp/raft's names). Staging is never set by litek8s but
// may appear in a configuration written by other tools.
const (
	Voter    Suffrage = "Voter"
	Nonvoter Suffrage = "Nonvoter"
	Staging  Suffrage = "Staging"
)

// MemberInfo is one member of the Raft configuration, with its recorded
// addresses (APIURL is empty until the member's record is applied).
type MemberInfo struct {
	Member
	Suffrage Suffrage `json:"suffrage"`
	// Leader is whether this member is the leader as far as the member
	// answering knows.
	Leader bool `json:"leader"`
}

// Membership returns the Raft configuration as this member knows it (the
// latest, possibly not yet committed), in configuration order. Any member
// answers; the leader's is authoritative.
func (s *Store) Membership() ([]MemberInfo, error) {
	servers, err := s.servers()
	if err != nil {
		return nil, err
	}
	_, leader := s.raft.LeaderWithID()
	out := make([]MemberInfo, 0, len(servers))
	for _, srv := range servers {
		m, _ := s.member(string(srv.ID))
		m.ID, m.RaftAddr = string(srv.ID), string(srv.Address)
		out = append(out, MemberInfo{Member: m, Suffrage: Suffrage(srv.Suffrage.String()), Leader: srv.ID == leader})
	}
	return out, nil
}

// AddMember adds m with the given suffrage, or changes the address of a
// member of the same ID. Adding an existing nonvoter as a Voter promotes
// it; adding an existing voter as a Nonvoter is refused (demote it).
func (s *Store) AddMember(ctx context.Context, m Member, suffrage Suffrage) error {
	if m.ID == "" || m.RaftAddr == "" || m.APIURL == "" {
		return fmt.Errorf("raftstore: add member: id, raftAddr and apiURL are required: %w", ErrInvalidMember)
	}
	if !s.IsLeader() {
		return kv.ErrNotLeader
	}
	switch suffrage {
	case Voter:
		if err := s.addMember(ctx, m); err != nil {
			return err
		}
		return s.PromoteMember(ctx, m.ID)
	case Nonvoter:
		return s.addNonvoter(ctx, m)
	}
	return fmt.Errorf("raftstore: add member %s: suffrage %q (want %s or %s): %w", m.ID, suffrage, Voter,
		Nonvoter, ErrInvalidMember)
}

// addNonvoter is addMember's twin for a member without a vote.
func (s *Store) addNonvoter(ctx context.Context, m Member) error {
	srv, found, err := s.server(m.ID)
	if err != nil {
		return err
	}
	if found && srv.Suffrage == raft.Voter {
		return fmt.Errorf("raftstore: %s is a voter; demote it instead: %w", m.ID, kv.ErrConflict)
	}
	if !found || srv.Address != raft.ServerAddress(m.RaftAddr) {
		f := s.raft.AddNonvoter(raft.ServerID(m.ID), raft.ServerAddress(m.RaftAddr), 0, s.cfg.ApplyTimeout)
		if err := s.await(f); err != nil {
			return fmt.Errorf("raftstore: add nonvoter %s: %w", m.ID, mapRaftError(err))
		}
	}
	return s.recordMember(ctx, m)
}

// RemoveMember removes member id from the configuration, tells it so (best
// effort: Removed), forgets its addresses and records that an
// administrator removed it (Removals). The leader refuses to remove
// itself (kv.ErrConflict).
func (s *Store) RemoveMember(ctx context.Context, id string) error {
	return s.removeMember(ctx, id, "removed by an administrator")
}

// RemoveMemberBecause is RemoveMember for another reason than an
// administrator's request (what `ctl members list` shows).
func (s *Store) RemoveMemberBecause(ctx context.Context, id, reason string) error {
	return s.removeMember(ctx, id, reason)
}

// removeMember is RemoveMember with the reason to record.
func (s *Store) removeMember(ctx context.Context, id, reason string) error {
	if err := s.changeable(id, "remove"); err != nil {
		return err
	}
	rec, _ := s.member(id)
	rec.ID = id
	f := s.raft.RemoveServer(raft.ServerID(id), 0, s.cfg.ApplyTimeout)
	if err := s.await(f); err != nil {
		return fmt.Errorf("raftstore: remove %s: %w", id, mapRaftError(err))
	}
	_, err := s.Propose(ctx, kv.Write{Op: kv.OpDelete, Key: kv.Key{Resource: membersResource, Name: id}})
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return fmt.Errorf("raftstore: removed %s but kept its record: %w", id, err)
	}
	if err := s.recordRemoval(ctx, Removal{ID: id, Reason: reason, At: time.Now().UTC().Round(time.Second)}); err != nil {
		return fmt.Errorf("raftstore: removed %s but not the reason: %w", id, err)
	}
	s.tellRemoved(ctx, rec, f.Index())
	return nil
}

// PromoteMember gives member id a vote (a no-op for a voter).
func (s *Store) PromoteMember(ctx context.Context, id string) error {
	if !s.IsLeader() {
		return kv.ErrNotLeader
	}
	srv, found, err := s.server(id)
	switch {
	case err != nil:
		return err
	case !found:
		return fmt.Errorf("raftstore: promote: member %q: %w", id, kv.ErrNotFound)
	case srv.Suffrage == raft.Voter:
		return nil
	}
	if err := s.await(s.raft.AddVoter(srv.ID, srv.Address, 0, s.cfg.ApplyTimeout)); err != nil {
		return fmt.Errorf("raftstore: promote %s: %w", id, mapRaftError(err))
	}
	return nil
}

// DemoteMember takes member id's vote away (a no-op for a nonvoter). The
// leader refuses to demote itself (kv.ErrConflict).
func (s *Store) DemoteMember(ctx context.Context, id string) error {
	if err := s.changeable(id, "demote"); err != nil {
		return err
	}
	if err := s.await(s.raft.DemoteVoter(raft.ServerID(id), 0, s.cfg.ApplyTimeout)); err != nil {
		return fmt.Errorf("raftstore: demote %s: %w", id, mapRaftError(err))
	}
	return nil
}

// changeable checks that this member leads and that id is another member
// of the configuration.
func (s *Store) changeable(id, verb string) error {
	if !s.IsLeader() {
		return kv.ErrNotLeader
	}
	if id == s.cfg.ID {
		return fmt.Errorf("raftstore: %s: %s is the leader; transfer leadership first: %w", verb, id, kv.ErrConflict)
	}
	_, found, err := s.server(id)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("raftstore: %s: member %q: %w", verb, id, kv.ErrNotFound)
	}
	return nil
}

// TransferLeadership hands leadership to voter id, or to the most
// up-to-date voter when id is empty, and waits until another member leads
// (or ctx ends). It returns the new leader's ID. Naming the leader itself
// is a no-op.
func (s *Store) TransferLeadership(ctx context.Context, id string) (string, error) {
	if !s.IsLeader() {
		return "", kv.ErrNotLeader
	}
	if id == s.cfg.ID {
		return id, nil
	}
	var f raft.Future
	if id == "" {
		f = s.raft.LeadershipTransfer()
	} else {
		srv, found, err := s.server(id)
		switch {
		case err != nil:
			return "", err
		case !found:
			return "", fmt.Errorf("raftstore: transfer leadership: member %q: %w", id, kv.ErrNotFound)
		case srv.Suffrage != raft.Voter:
			return "", fmt.Errorf("raftstore: transfer leadership: %s has no vote: %w", id, kv.ErrConflict)
		}
		f = s.raft.LeadershipTransferToServer(srv.ID, srv.Address)
	}
	if err := s.await(f); err != nil {
		return "", fmt.Errorf("raftstore: transfer leadership: %w", mapRaftError(err))
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if _, leader := s.raft.LeaderWithID(); leader != "" && string(leader) != s.cfg.ID {
			return string(leader), nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("raftstore: transferred leadership, but no new leader is known yet: %w", ctx.Err())
		case <-s.closing:
			return "", kv.ErrClosed
		case <-t.C:
		}
	}
}

// PeerClient returns the client this member uses to call other members
// (it trusts their serving certificates), for forwarding admin requests
// to the leader.
func (s *Store) PeerClient() *http.Client {
	if s.cfg.Peer == nil {
		return http.DefaultClient
	}
	return s.cfg.Peer
}

// server returns member id's entry in the latest configuration.
func (s *Store) server(id string) (raft.Server, bool, error) {
	servers, err := s.servers()
	if err != nil {
		return raft.Server{}, false, err
	}
	for _, srv := range servers {
		if srv.ID == raft.ServerID(id) {
			return srv, true, nil
		}
	}
	return raft.Server{}, false, nil
}

func (s *Store) servers() ([]raft.Server, error) {
	cf := s.raft.GetConfiguration()
	if err := s.await(cf); err != nil {
		return nil, mapRaftError(err)
	}
	return cf.Configuration().Servers, nil
}
