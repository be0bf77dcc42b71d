package raftstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/httpx"
	"github.com/litek8s/litek8s/internal/kv"
)

// Rewriting stale objects is the last step of an encryption key rotation
// (`ctl secrets reencrypt`): once every member runs with the new key first,
// the leader rewrites, through Raft, every object whose stored form is
// stale (an older key, or unencrypted), then every member takes a Raft
// snapshot at or past those writes, so that no member needs the old key to
// restart: a restart restores the latest snapshot (written with the key
// first at that time) and replays only the entries after it.

const pathSnapshot = "/internal/v1/snapshot"

// snapshotWait bounds how long a member waits to apply the rewrites before
// it snapshots.
const snapshotWait = 30 * time.Second

// RewriteResult is what RewriteStale did.
type RewriteResult struct {
	// Rewritten counts the objects rewritten, per resource.
	Rewritten map[string]int `json:"rewritten"`
	// Index is the revision after the rewrites.
	Index uint64 `json:"index"`
	// Snapshots is, per member ID, the index its snapshot covers.
	Snapshots map[string]uint64 `json:"snapshots"`
}

// RewriteStale rewrites every stale object (on the leader; kv.ErrNotLeader
// elsewhere), then has every member snapshot. An object written or deleted
// meanwhile is skipped: that write used the current key. It returns an
// error naming the members that did not snapshot; running it again is
// safe.
func (s *Store) RewriteStale(ctx context.Context) (RewriteResult, error) {
	res := RewriteResult{Rewritten: map[string]int{}, Snapshots: map[string]uint64{}}
	if !s.IsLeader() {
		return res, kv.ErrNotLeader
	}
	view, _ := s.fsm.backupView()
	var stale []*kv.Object
	for _, t := range view.trees {
		t.Ascend(func(obj *kv.Object) bool {
			if obj.Stale {
				stale = append(stale, obj)
			}
			return true
		})
	}
	for _, obj := range stale {
		_, err := s.Propose(ctx, kv.Write{Op: kv.OpUpdate, Key: obj.Key, ExpectedRV: obj.RV, Object: obj.Raw})
		switch {
		case errors.Is(err, kv.ErrConflict), errors.Is(err, kv.ErrNotFound):
		case err != nil:
			return res, fmt.Errorf("raftstore: rewrite %s: %w", obj.Key, err)
		default:
			res.Rewritten[obj.Key.Resource]++
		}
	}
	res.Index = s.Revision()
	members, err := s.Membership()
	if err != nil {
		return res, err
	}
	var errs []error
	for _, m := range members {
		var idx uint64
		var err error
		if m.ID == s.cfg.ID {
			idx, err = s.snapshotAt(ctx, res.Index)
		} else if m.APIURL == "" {
			err = errors.New("its API URL is not known yet")
		} else {
			var out snapshotAnswer
			err = callMember(ctx, s.cfg.Peer, m.APIURL, "", http.MethodPost,
				pathSnapshot+"?index="+strconv.FormatUint(res.Index, 10), nil, &out)
			idx = out.Index
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("member %s did not snapshot: %w", m.ID, err))
			continue
		}
		res.Snapshots[m.ID] = idx
	}
	return res, errors.Join(errs...)
}

type snapshotAnswer struct {
	Index uint64 `json:"index"`
}

// snapshotAt waits until this member has applied idx, then snapshots; it
// returns the index the latest snapshot covers.
func (s *Store) snapshotAt(ctx context.Context, idx uint64) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, snapshotWait)
	defer cancel()
	if err := s.fsm.waitApplied(ctx, idx); err != nil {
		return 0, err
	}
	if err := s.Snapshot(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return 0, err
	}
	return strconv.ParseUint(s.raft.Stats()["last_snapshot_index"], 10, 64)
}

// serveSnapshot is POST /internal/v1/snapshot?index=N: snapshot once N is
// applied.
func (s *Store) serveSnapshot(w http.ResponseWriter, r *http.Request) error {
	idx, err := strconv.ParseUint(r.URL.Query().Get("index"), 10, 64)
	if err != nil {
		return httpx.Errorf(http.StatusBadRequest, "index: %s", err)
	}
	got, err := s.snapshotAt(r.Context(), idx)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, snapshotAnswer{Index: got})
	return nil
}
