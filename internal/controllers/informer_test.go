package controllers

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
)

func cmObj(name, uid string, rv uint64) *kv.Object {
	return &kv.Object{Key: kv.Key{Resource: "configmaps", Namespace: "ns", Name: name}, UID: uid, RV: rv,
		Raw: fmt.Appendf(nil, `{"metadata":{"name":%q,"uid":%q}}`, name, uid)}
}

// An informer lists, follows the watch, and when the watch ends with
// ErrExpired lists again, counts a resync and hands over the difference.
func TestInformerRelistsWhenExpired(t *testing.T) {
	s := newFakeStore()
	s.set(cmObj("a", "ua", 1))
	s.set(cmObj("b", "ub", 2))
	b3, c4 := cmObj("b", "ub", 3), cmObj("c", "uc", 4)
	w1 := s.script(&kv.ExpiredError{Oldest: 10}, kv.Event{Type: kv.Modified, Object: b3}, kv.Event{Type: kv.Added, Object: c4})
	w2 := s.script(kv.ErrClosed)
	s.beforeList = func(n int) {
		if n == 2 { // while the informer was behind: a deleted, c replaced, d added
			s.del(kv.Key{Resource: "configmaps", Namespace: "ns", Name: "a"})
			s.set(b3)
			s.set(cmObj("c", "uc2", 11))
			s.set(cmObj("d", "ud", 12))
		}
	}
	var got []string
	var resyncs atomic.Uint64
	in := newInformer(s, "configmaps", func(ev kv.Event) {
		got = append(got, fmt.Sprintf("%s %s %s@%d", ev.Type, ev.Object.Key.Name, ev.Object.UID, ev.Object.RV))
	}, &resyncs, time.Millisecond, discard())
	done := make(chan struct{})
	go func() {
		defer close(done)
		in.run(t.Context())
	}()
	select {
	case <-done: // the second watch ends with ErrClosed: the store is closing
	case <-time.After(5 * time.Second):
		t.Fatal("informer did not stop when the store closed")
	}
	select {
	case <-in.synced:
	default:
		t.Error("not synced after its first list")
	}
	want := []string{
		"ADDED a ua@1", "ADDED b ub@2", // the first list
		"MODIFIED b ub@3", "ADDED c uc@4", // the watch
		"DELETED a ua@1", "DELETED c uc@4", "ADDED c uc2@11", "ADDED d ud@12", // the relist (b unchanged)
	}
	// Deletions of the relist come in map order: compare them as a set.
	if len(got) != len(want) || !slices.Equal(got[:4], want[:4]) || !sameSet(got[4:6], want[4:6]) || !slices.Equal(got[6:], want[6:]) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
	if resyncs.Load() != 1 {
		t.Errorf("resyncs = %d, want 1", resyncs.Load())
	}
	if w1.from != 2 || w2.from != 12 {
		t.Errorf("watched from %d then %d, want 2 then 12 (the lists' revisions)", w1.from, w2.from)
	}
	if len(in.known) != 3 {
		t.Errorf("knows %d objects, want 3", len(in.known))
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
