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
	// Deletions of the relist: compare them as a set.
	if len(got) != len(want) || !slices.Equal(got[:4], want[:4]) || !sameSet(got[4:6], want[4:6]) || !slices.Equal(got[6:], want[6:]) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
	if resyncs.Load() != 1 {
		t.Errorf("resyncs = %d, want 1", resyncs.Load())
	}
	if w1.from != 2 || w2.from != 12 {
		t.Errorf("watched from %d then %d, want 2 then 12 (the lists' revisions)", w1.from, w2.from)
	}
	if n := len(in.objects()); n != 3 {
		t.Errorf("knows %d objects, want 3", n)
	}
}

// runInformer runs in until the store closes and returns the events it
// handed over as "TYPE name uid@rv".
func runInformer(t *testing.T, in *informer) []string {
	t.Helper()
	var got []string
	in.handle = func(ev kv.Event) {
		got = append(got, fmt.Sprintf("%s %s %s@%d", ev.Type, ev.Object.Key.Name, ev.Object.UID, ev.Object.RV))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		in.run(t.Context())
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("informer did not stop when the store closed")
	}
	return got
}

// An informer whose changes outgrow its base takes a newer view and
// adopts it once it handed over every change up to it: a later relist
// still hands over exactly what the handler was not told.
func TestInformerMovesItsBase(t *testing.T) {
	s := newFakeStore()
	s.set(cmObj("a", "ua", 1))
	s.set(cmObj("b", "ub", 2))
	b3, c4, c6 := cmObj("b", "ub", 3), cmObj("c", "uc", 4), cmObj("c", "uc", 6)
	a := kv.Key{Resource: "configmaps", Namespace: "ns", Name: "a"}
	a5 := cmObj("a", "ua", 5) // its deletion
	w1 := s.script(&kv.ExpiredError{Oldest: 10}, kv.Event{Type: kv.Modified, Object: b3}, kv.Event{Type: kv.Added, Object: c4},
		kv.Event{Type: kv.Deleted, Object: a5}, kv.Event{Type: kv.Modified, Object: c6})
	w2 := s.script(kv.ErrClosed)
	s.beforeList = func(n int) {
		switch n {
		case 2: // taken after the second change, as of revision 5: a's deletion still to come
			s.set(b3)
			s.set(c4)
			s.del(a)
		case 3: // while the informer was behind: b deleted, d added (c as the watch left it)
			s.set(c6)
			s.del(kv.Key{Resource: "configmaps", Namespace: "ns", Name: "b"})
			s.set(cmObj("d", "ud", 9))
		}
	}
	var resyncs atomic.Uint64
	in := newInformer(s, "configmaps", nil, &resyncs, time.Millisecond, discard())
	in.minChanged = 1
	got := runInformer(t, in)
	want := []string{
		"ADDED a ua@1", "ADDED b ub@2", // the first list
		"MODIFIED b ub@3", "ADDED c uc@4", "DELETED a ua@5", "MODIFIED c uc@6", // the watch
		"DELETED b ub@3", "ADDED d ud@9", // the relist
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
	if s.lists != 3 || resyncs.Load() != 1 {
		t.Errorf("%d lists and %d resyncs, want 3 (the first, the newer view, the relist) and 1", s.lists, resyncs.Load())
	}
	if w1.from != 2 || w2.from != 9 {
		t.Errorf("watched from %d then %d, want 2 then 9", w1.from, w2.from)
	}
	if in.base.Rev != 9 || len(in.changed) != 0 {
		t.Errorf("base at %d with %d changes, want the relist's (9) and none", in.base.Rev, len(in.changed))
	}
	var view []string // what the garbage collector deletes from its graph when the resource goes away
	in.each(func(o *kv.Object) { view = append(view, fmt.Sprintf("%s %s@%d", o.Key.Name, o.UID, o.RV)) })
	if want := []string{"c uc@6", "d ud@9"}; !slices.Equal(view, want) {
		t.Errorf("view %q, want %q", view, want)
	}
}

// A newer view is not adopted before the informer handed over the changes
// up to it: when the watch expires first, the relist diffs against what
// was handed over (here a's deletion, which the newer view already had).
func TestInformerRelistsBeforeAdopting(t *testing.T) {
	s := newFakeStore()
	s.set(cmObj("a", "ua", 1))
	s.set(cmObj("b", "ub", 2))
	b3, c4 := cmObj("b", "ub", 3), cmObj("c", "uc", 4)
	s.script(&kv.ExpiredError{Oldest: 10}, kv.Event{Type: kv.Modified, Object: b3}, kv.Event{Type: kv.Added, Object: c4})
	s.script(kv.ErrClosed)
	s.beforeList = func(n int) {
		if n == 2 { // as of revision 5: a deleted
			s.set(b3)
			s.set(c4)
			s.del(kv.Key{Resource: "configmaps", Namespace: "ns", Name: "a"})
		}
	}
	in := newInformer(s, "configmaps", nil, new(atomic.Uint64), time.Millisecond, discard())
	in.minChanged = 1
	got := runInformer(t, in)
	want := []string{"ADDED a ua@1", "ADDED b ub@2", "MODIFIED b ub@3", "ADDED c uc@4", "DELETED a ua@1"}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
	if s.lists != 3 {
		t.Errorf("%d lists, want 3", s.lists)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
