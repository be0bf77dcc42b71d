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
	var resyncs atomic.Uint64
	got, in := follow(t, s, &resyncs, nil)
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

// follow runs informers of configmaps in the store until it closes (its
// last scripted watch ends with ErrClosed) and returns the events they
// handed over as "TYPE name uid@rv", and the view. setup, when set, is
// called once the first list was handed over.
func follow(t *testing.T, s Store, resyncs *atomic.Uint64, setup func(*informer)) ([]string, *informer) {
	t.Helper()
	var got []string
	set := newInformers(s, func(ev kv.Event) {
		got = append(got, fmt.Sprintf("%s %s %s@%d", ev.Type, ev.Object.Key.Name, ev.Object.UID, ev.Object.RV))
	}, resyncs, time.Millisecond, discard())
	if err := set.add(t.Context(), "configmaps"); err != nil {
		t.Fatal(err)
	}
	in := set.views["configmaps"]
	if setup != nil {
		setup(in)
	}
	if !set.Watch(t.Context()) {
		t.Fatal("Watch: false")
	}
	timeout := time.After(5 * time.Second)
	for {
		select {
		case <-set.Ready():
			if !set.Take(t.Context()) {
				return got, in
			}
		case <-timeout:
			t.Fatal("informers did not stop when the store closed")
		}
	}
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
	got, in := follow(t, s, &resyncs, func(in *informer) { in.minChanged = 1 })
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
	got, _ := follow(t, s, new(atomic.Uint64), func(in *informer) { in.minChanged = 1 })
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

// Informers of several resources share one watch of every resource, from
// the oldest list's revision: each resource takes only the changes after
// its own list, and a resource not followed is ignored.
func TestInformersShareOneWatch(t *testing.T) {
	obj := func(res, name string, rv uint64) *kv.Object {
		o := cmObj(name, "u"+name, rv)
		o.Key.Resource = res
		return o
	}
	s := newFakeStore()
	s.set(obj("configmaps", "a", 1))
	s.set(obj("secrets", "s", 2))
	w := s.script(kv.ErrClosed,
		kv.Event{Type: kv.Added, Object: obj("secrets", "t", 3)}, // in the secrets' list already
		kv.Event{Type: kv.Added, Object: obj("configmaps", "b", 4)},
		kv.Event{Type: kv.Added, Object: obj("pods", "p", 5)}, // not followed
		kv.Event{Type: kv.Added, Object: obj("secrets", "u", 6)})
	var got []string
	set := newInformers(s, func(ev kv.Event) {
		got = append(got, fmt.Sprintf("%s %s %s@%d", ev.Type, ev.Object.Key.Resource, ev.Object.Key.Name, ev.Object.RV))
	}, new(atomic.Uint64), time.Millisecond, discard())
	ctx := t.Context()
	if err := set.add(ctx, "configmaps"); err != nil { // listed at 2
		t.Fatal(err)
	}
	s.set(obj("secrets", "t", 3))
	if err := set.add(ctx, "secrets"); err != nil { // listed at 3
		t.Fatal(err)
	}
	if !set.Watch(t.Context()) {
		t.Fatal("Watch: false")
	}
	<-set.Ready()
	if set.Take(ctx) {
		t.Error("Take after the store closed the watch: true, want false")
	}
	want := []string{"ADDED configmaps a@1", "ADDED secrets s@2", "ADDED secrets t@3",
		"ADDED configmaps b@4", "ADDED secrets u@6"}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
	if w.from != 2 {
		t.Errorf("watched from %d, want 2 (the oldest list's revision)", w.from)
	}
	var view []string
	set.remove("secrets", func(o *kv.Object) { view = append(view, o.Key.Name) })
	if want := []string{"s", "t", "u"}; !slices.Equal(view, want) || set.has("secrets") || !set.has("configmaps") {
		t.Errorf("removed secrets' view %q, want %q; still followed: secrets %v, configmaps %v",
			view, want, set.has("secrets"), set.has("configmaps"))
	}
}
