package api

import (
	"context"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/kv"
)

// The deletion loop: what kube's kubelet does to finish a pod's graceful
// deletion, run by the leader until simulated kubelets take over.
//
//   - A pod deleted gracefully (bound to a node) is deleted when its grace
//     period ends, as a kubelet does once its containers have stopped:
//     litek8s runs no containers, so there is nothing else to wait for.
//     Finalizers still hold it afterwards.
//
// Namespaces being deleted are emptied and finalized by the namespace
// controller (internal/controllers/namespace).
//
// Concurrency: Run is the loop's only goroutine; DELETE handlers hand it
// work through schedule, under mu.

// reapInterval is how often the loop looks for due work.
const reapInterval = 500 * time.Millisecond

// writeState is the write path's own state in a Server.
type writeState struct {
	fm     fieldManagers
	reaper reaper
}

// reaper is the deletion loop's state.
type reaper struct {
	mu sync.Mutex // protects the fields below
	// due are pods whose graceful deletion ends at the given time.
	due map[kv.Key]dueDeletion
	// rescan: look for pods being deleted in the whole store (on becoming
	// leader: the deletions another leader scheduled are not in due).
	rescan bool
}

type dueDeletion struct {
	uid string
	at  time.Time
}

func (s *Server) reaper() *reaper {
	rp := &s.writes.reaper
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.due == nil {
		rp.due = make(map[kv.Key]dueDeletion)
	}
	return rp
}

// schedule deletes the pod at key (if its uid is still uid) at time at.
func (rp *reaper) schedule(key kv.Key, uid string, at time.Time) {
	rp.mu.Lock()
	rp.due[key] = dueDeletion{uid: uid, at: at}
	rp.mu.Unlock()
}

// Run runs the deletion loop until ctx ends; it works only while this
// member is the leader. The caller owns the goroutine and waits for Run to
// return before closing the store.
func (s *Server) Run(ctx context.Context) {
	rp := s.reaper()
	t := time.NewTicker(reapInterval)
	defer t.Stop()
	leader := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_, self, ok := s.store.Leader()
		if !ok || !self {
			leader = false
			continue
		}
		if !leader {
			leader = true
			rp.mu.Lock()
			rp.rescan = true
			rp.mu.Unlock()
		}
		s.reapOnce(ctx)
	}
}

// reapOnce does the work that is due.
func (s *Server) reapOnce(ctx context.Context) {
	rp := s.reaper()
	rp.mu.Lock()
	rescan := rp.rescan
	rp.rescan = false
	rp.mu.Unlock()
	if rescan {
		s.scanTerminatingPods(ctx)
	}
	s.reapPods(ctx)
}

// scanTerminatingPods schedules every pod with a graceful deletion under
// way.
func (s *Server) scanTerminatingPods(ctx context.Context) {
	l, err := s.store.List(ctx, "pods", "", false)
	if err != nil {
		return
	}
	rp := s.reaper()
	l.Range("", func(obj *kv.Object) bool {
		meta := gjson.GetBytes(obj.Raw, "metadata")
		ts, grace := meta.Get("deletionTimestamp"), meta.Get("deletionGracePeriodSeconds")
		if !ts.Exists() || grace.Int() == 0 {
			return true
		}
		if at, err := time.Parse(time.RFC3339, ts.Str); err == nil {
			rp.schedule(obj.Key, obj.UID, at)
		}
		return true
	})
}

// reapPods deletes the pods whose grace period has ended.
func (s *Server) reapPods(ctx context.Context) {
	rp := s.reaper()
	now := s.cfg.Now()
	var todo []kv.Key
	var uids []string
	rp.mu.Lock()
	for k, d := range rp.due {
		if !d.at.After(now) {
			todo = append(todo, k)
			uids = append(uids, d.uid)
			delete(rp.due, k)
		}
	}
	rp.mu.Unlock()
	res := s.registry().lookup("v1", "pods")
	if res == nil {
		return
	}
	for i, k := range todo {
		q := &request{res: res, namespace: k.Namespace, name: k.Name}
		zero := int64(0)
		uid := types.UID(uids[i])
		_, err := s.deleteObject(ctx, q, &metav1.DeleteOptions{GracePeriodSeconds: &zero,
			Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
			s.log.Warn("deleting a pod whose grace period ended", "pod", k.Namespace+"/"+k.Name, "err", err)
			rp.schedule(k, uids[i], now.Add(time.Second)) // try again
		}
	}
}
