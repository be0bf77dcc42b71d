package raftstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/kv"
)

// names lists the keys Range yields, as "ns/name".
func names(l *List, after string) []string {
	var out []string
	l.Range(after, func(o *kv.Object) bool {
		out = append(out, o.Key.Namespace+"/"+o.Key.Name)
		return true
	})
	return out
}

func TestListRange(t *testing.T) {
	h := newHarness(t, 100, 10)
	for _, k := range [][2]string{{"b", "2"}, {"a", "1"}, {"b", "1"}, {"c", "1"}, {"a", "3"}, {"b", "3"}} {
		h.create(k[0], k[1])
	}
	h.mustApply(kv.Write{Op: kv.OpCreate, Key: kv.Key{Resource: "secrets", Namespace: "b", Name: "s"}, Object: []byte(`{}`)})
	for _, n := range []string{"n2", "n1", "n3"} { // cluster-scoped
		h.mustApply(kv.Write{Op: kv.OpCreate, Key: kv.Key{Resource: "namespaces", Name: n}, Object: []byte(`{}`)})
	}
	s := &Store{fsm: h.f}

	tests := []struct {
		name, resource, namespace, after string
		want                             []string
	}{
		{"all namespaces", "configmaps", "", "", []string{"a/1", "a/3", "b/1", "b/2", "b/3", "c/1"}},
		{"one namespace", "configmaps", "b", "", []string{"b/1", "b/2", "b/3"}},
		{"first namespace", "configmaps", "a", "", []string{"a/1", "a/3"}},
		{"last namespace", "configmaps", "c", "", []string{"c/1"}},
		{"namespace after", "configmaps", "b", "1", []string{"b/2", "b/3"}},
		{"after a missing name", "configmaps", "b", "15", []string{"b/2", "b/3"}},
		{"after the last", "configmaps", "b", "3", nil},
		{"all namespaces after", "configmaps", "", "b/1", []string{"b/2", "b/3", "c/1"}},
		{"all namespaces after the last of a namespace", "configmaps", "", "a/3", []string{"b/1", "b/2", "b/3", "c/1"}},
		{"all namespaces after a missing key", "configmaps", "", "a/2", []string{"a/3", "b/1", "b/2", "b/3", "c/1"}},
		{"all namespaces after the last", "configmaps", "", "c/1", nil},
		{"empty namespace", "configmaps", "zz", "", nil},
		{"other resource", "secrets", "", "", []string{"b/s"}},
		{"unknown resource", "pods", "", "", nil},
		{"cluster-scoped", "namespaces", "", "", []string{"/n1", "/n2", "/n3"}},
		{"cluster-scoped after", "namespaces", "", "n1", []string{"/n2", "/n3"}},
		{"cluster-scoped after a missing name", "namespaces", "", "n0", []string{"/n1", "/n2", "/n3"}},
		{"cluster-scoped after the last", "namespaces", "", "n3", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := s.List(t.Context(), tt.resource, tt.namespace, false)
			if err != nil {
				t.Fatal(err)
			}
			if l.Rev != 10 {
				t.Errorf("Rev = %d, want 10", l.Rev)
			}
			if got := names(l, tt.after); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Range = %v, want %v", got, tt.want)
			}
		})
	}

	t.Run("stop early", func(t *testing.T) {
		l, _ := s.List(t.Context(), "configmaps", "", false)
		n := 0
		l.Range("", func(*kv.Object) bool { n++; return n < 2 })
		if n != 2 {
			t.Errorf("Range called fn %d times after it returned false at 2", n)
		}
	})
}

func TestListIsImmutableView(t *testing.T) {
	h := newHarness(t, 100, 10)
	h.create("ns", "a")
	h.create("ns", "b")
	s := &Store{fsm: h.f}
	before, _ := s.List(t.Context(), "configmaps", "", false)

	// Concurrent writers must not change or race with a view being read.
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 200 {
			h.create("ns", "x"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		}
		h.mustApply(kv.Write{Op: kv.OpDelete, Key: cmKey("ns", "a")})
	})
	for range 50 {
		if got := names(before, ""); !reflect.DeepEqual(got, []string{"ns/a", "ns/b"}) {
			t.Fatalf("view changed under writes: %v", got)
		}
		l, _ := s.List(t.Context(), "configmaps", "", false)
		n := 0
		l.Range("", func(*kv.Object) bool { n++; return true })
		if n < 1 {
			t.Fatalf("empty list")
		}
	}
	wg.Wait()
	if before.Rev != 2 {
		t.Errorf("old view Rev = %d, want 2", before.Rev)
	}
	after, _ := s.List(t.Context(), "configmaps", "", false)
	if got := len(names(after, "")); got != 201 {
		t.Errorf("new view has %d objects, want 201", got)
	}
	if obj, rev, err := s.Get(t.Context(), cmKey("ns", "a"), false); !errors.Is(err, kv.ErrNotFound) || obj != nil || rev != after.Rev {
		t.Errorf("Get(deleted) = %v, %d, %v; want nil, %d, ErrNotFound", obj, rev, err, after.Rev)
	}
	if obj, _, err := s.Get(t.Context(), cmKey("ns", "b"), false); err != nil || obj.Key != cmKey("ns", "b") {
		t.Errorf("Get(ns/b) = %v, %v", obj, err)
	}
}

func TestReadIndexerCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		release := make(chan struct{})
		r := newReadIndexer(func(ctx context.Context) (uint64, error) {
			n := calls.Add(1)
			<-release
			return uint64(n) * 10, nil
		})
		defer r.close()

		// The first callers each start a round, up to maxRounds in flight.
		first := make(chan uint64, maxRounds)
		for range maxRounds {
			go func() { idx, _ := r.get(t.Context()); first <- idx }()
			synctest.Wait() // its round is in flight
		}

		// Callers arriving now must wait for the next round (those in
		// flight may have started before their reads did), and all share it.
		const n = 8
		results := make(chan uint64, n)
		for range n {
			go func() {
				idx, err := r.get(t.Context())
				if err != nil {
					t.Error(err)
				}
				results <- idx
			}()
		}
		synctest.Wait() // all queued
		if c := calls.Load(); c != maxRounds {
			t.Fatalf("%d fetches started while %d were in flight, want %d", c, maxRounds, maxRounds)
		}
		close(release)
		seen := map[uint64]bool{}
		for range maxRounds {
			seen[<-first] = true
		}
		if len(seen) != maxRounds || seen[10*(maxRounds+1)] {
			t.Errorf("first callers got rounds %v, want one each of the first %d", seen, maxRounds)
		}
		for range n {
			if idx := <-results; idx != 10*(maxRounds+1) {
				t.Errorf("late caller got %d, want round %d's %d", idx, maxRounds+1, 10*(maxRounds+1))
			}
		}
		if c := calls.Load(); c != maxRounds+1 {
			t.Errorf("%d fetches for %d callers, want %d", c, n+maxRounds, maxRounds+1)
		}

		// A caller whose context ends stops waiting.
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := r.get(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("get with a cancelled context = %v, want Canceled", err)
		}
	})
}

func TestReadIndexerClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		r := newReadIndexer(func(ctx context.Context) (uint64, error) {
			<-release
			return 1, nil
		})
		for range maxRounds {
			go r.get(t.Context())
			synctest.Wait() // its round is in flight
		}
		// A caller queued for the next round when the indexer closes must
		// not wait for its context: it gets ErrClosed.
		queued := make(chan error, 1)
		go func() {
			_, err := r.get(t.Context())
			queued <- err
		}()
		synctest.Wait()
		closed := make(chan struct{})
		go func() { r.close(); close(closed) }()
		synctest.Wait() // close waits for the rounds in flight
		close(release)
		if err := <-queued; !errors.Is(err, kv.ErrClosed) {
			t.Errorf("queued caller got %v, want ErrClosed", err)
		}
		<-closed
		if _, err := r.get(t.Context()); !errors.Is(err, kv.ErrClosed) {
			t.Errorf("get after close = %v, want ErrClosed", err)
		}
	})
}

func TestInternalHandlerAuth(t *testing.T) {
	s := &Store{cfg: Config{ID: "m0", ClusterID: "c1", VerifyJoinToken: joinTokenIs("secret"), PeerAuth: testPeerAuth("peer")}}
	tests := []struct {
		name, method, path string
		header             [2]string
		want               int
	}{
		{"secrets without token", "GET", pathSecrets, [2]string{}, http.StatusUnauthorized},
		{"secrets with a wrong token", "GET", pathSecrets, [2]string{"Authorization", "Bearer nope"}, http.StatusUnauthorized},
		{"secrets, not bearer", "GET", pathSecrets, [2]string{"Authorization", "Basic secret"}, http.StatusUnauthorized},
		{"secrets with the join token", "GET", pathSecrets, [2]string{"Authorization", "Bearer secret"}, http.StatusNotFound}, // no JoinSecrets configured
		{"secrets while the token cannot be checked", "GET", pathSecrets, [2]string{"Authorization", "Bearer unsure"}, http.StatusServiceUnavailable},
		{"read index, not a member", "GET", pathReadIndex, [2]string{"Authorization", "Bearer secret"}, http.StatusForbidden},
		{"join, not a member", "POST", pathJoin, [2]string{}, http.StatusForbidden},
		{"join, a member", "POST", pathJoin, [2]string{"X-Test-Member", "peer"}, http.StatusBadRequest}, // empty body
		{"hello, anyone", "GET", pathHello, [2]string{}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.header[0] != "" {
				req.Header.Set(tt.header[0], tt.header[1])
			}
			rec := httptest.NewRecorder()
			s.InternalHandler().ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Errorf("status %d, want %d: %s", rec.Code, tt.want, rec.Body)
			}
		})
	}
	noAuth := &Store{cfg: Config{VerifyJoinToken: joinTokenIs("secret")}}
	rec := httptest.NewRecorder()
	noAuth.InternalHandler().ServeHTTP(rec, httptest.NewRequest("GET", pathReadIndex, nil))
	if rec.Code != http.StatusForbidden {
		t.Errorf("read index without PeerAuth configured: %d, want 403", rec.Code)
	}
}

// joinTokenIs is a VerifyJoinToken that takes want, answers "unsure" as a
// member that cannot read the token's record now, and refuses the rest.
func joinTokenIs(want string) func(context.Context, string) error {
	return func(_ context.Context, tok string) error {
		switch tok {
		case want:
			return nil
		case "unsure":
			return kv.ErrNoLeader
		}
		return fmt.Errorf("%w: not %q", ErrBadJoinToken, want)
	}
}

func TestFetchHello(t *testing.T) {
	s := &Store{cfg: Config{ID: "m0", ClusterID: "c1"}}
	srv := httptest.NewServer(s.InternalHandler())
	defer srv.Close()
	h, err := FetchHello(t.Context(), srv.Client(), srv.URL)
	if err != nil || h != (Hello{ID: "m0", ClusterID: "c1"}) {
		t.Errorf("hello = %+v, %v", h, err)
	}
}

func TestFetchSecrets(t *testing.T) {
	s := &Store{cfg: Config{VerifyJoinToken: joinTokenIs("tok"), JoinSecrets: func() ([]byte, error) {
		return []byte(`{"ca":"pem"}`), nil
	}}}
	srv := httptest.NewServer(s.InternalHandler())
	defer srv.Close()
	got, err := FetchSecrets(t.Context(), srv.Client(), srv.URL, "tok")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"ca":"pem"}` {
		t.Errorf("secrets = %s", got)
	}
	if _, err := FetchSecrets(t.Context(), srv.Client(), srv.URL, "bad"); err == nil {
		t.Error("FetchSecrets with a bad token succeeded")
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		ok     bool
	}{
		{"default", func(*Config) {}, true},
		{"no id", func(c *Config) { c.ID = "" }, false},
		{"no data dir", func(c *Config) { c.DataDir = "" }, false},
		{"no raft addr", func(c *Config) { c.RaftAddr = "" }, false},
		{"zero feed", func(c *Config) { c.FeedSize = 0 }, false},
		{"zero watch buffer", func(c *Config) { c.WatchBuffer = 0 }, false},
		{"zero heartbeat", func(c *Config) { c.HeartbeatTimeout = 0 }, false},
		{"no logger", func(c *Config) { c.Logger = nil }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			if err := c.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestListModRev(t *testing.T) {
	h := newHarness(t, 100, 10)
	s := &Store{fsm: h.f}
	modRev := func(resource string) uint64 {
		t.Helper()
		l, err := s.List(t.Context(), resource, "", false)
		if err != nil {
			t.Fatal(err)
		}
		return l.ModRev
	}
	secret := kv.Key{Resource: "secrets", Namespace: "ns", Name: "s"}
	h.create("ns", "a")                                                              // 1
	h.mustApply(kv.Write{Op: kv.OpCreate, Key: secret, Object: []byte(`{}`)})        // 2
	h.create("other", "b")                                                           // 3
	_, err := h.apply(kv.Write{Op: kv.OpCreate, Key: cmKey("ns", "a"), Object: nil}) // 4: fails
	if !errors.Is(err, kv.ErrAlreadyExists) {
		t.Fatal(err)
	}
	h.mustApply(kv.Write{Op: kv.OpUpdate, Key: secret, Object: []byte(`{}`)}) // 5
	if got := modRev("configmaps"); got != 3 {
		t.Errorf("configmaps ModRev = %d, want 3 (failed writes and other resources do not count)", got)
	}
	if got := modRev("secrets"); got != 5 {
		t.Errorf("secrets ModRev = %d, want 5", got)
	}
	h.mustApply(kv.Write{Op: kv.OpDelete, Key: secret}) // 6
	if got := modRev("secrets"); got != 6 {
		t.Errorf("secrets ModRev after delete = %d, want 6", got)
	}
	if got := modRev("pods"); got != 0 {
		t.Errorf("never-written resource ModRev = %d, want 0", got)
	}

	// After a restore the history before the snapshot is gone: every
	// resource, including ones the snapshot holds no object of (secrets,
	// whose last object was deleted), counts as changed at the snapshot.
	h.index = 10
	h.f.ApplyBatch([]*raft.Log{{Index: 10, Type: raft.LogConfiguration}})
	data := persist(t, h.f)
	restored := newFSM(nil, 100, 10)
	if err := restored.Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
		t.Fatal(err)
	}
	s = &Store{fsm: restored}
	for _, res := range []string{"configmaps", "secrets", "pods"} {
		if got := modRev(res); got != 10 {
			t.Errorf("%s ModRev after restore = %d, want the snapshot index 10", res, got)
		}
	}
}

// A list taken at a revision can be continued from the same state after
// later writes (paginated lists over a consistent snapshot), as long as the
// view is among the last maxPastViews kept; older ones are ErrExpired.
func TestListAtKeepsPagedSnapshot(t *testing.T) {
	h := newHarness(t, 100, 10)
	s := &Store{fsm: h.f}
	names := func(l *List) (out []string) {
		l.Range("", func(o *kv.Object) bool { out = append(out, o.Key.Name); return true })
		return out
	}
	h.create("ns", "a")
	h.create("ns", "b")
	first, err := s.List(t.Context(), "configmaps", "ns", false)
	if err != nil {
		t.Fatal(err)
	}
	h.create("ns", "c")
	h.mustApply(kv.Write{Op: kv.OpDelete, Key: cmKey("ns", "a")})
	at, err := s.ListAt(t.Context(), "configmaps", "ns", first.Rev)
	if err != nil {
		t.Fatalf("ListAt(%d) after two writes: %v", first.Rev, err)
	}
	if got := fmt.Sprint(names(at)); got != "[a b]" || at.Rev != first.Rev {
		t.Fatalf("state at %d: %v rev %d, want [a b] rev %d", first.Rev, got, at.Rev, first.Rev)
	}
	cur, _ := s.List(t.Context(), "configmaps", "ns", false)
	if got := fmt.Sprint(names(cur)); got != "[b c]" {
		t.Fatalf("current state: %v", got)
	}
	// Each list after a write keeps one more view; the first one ages out.
	for i := range maxPastViews {
		h.create("ns", fmt.Sprintf("x%02d", i))
		if _, err := s.List(t.Context(), "configmaps", "ns", false); err != nil {
			t.Fatal(err)
		}
	}
	h.create("ns", "last")
	if _, err := s.ListAt(t.Context(), "configmaps", "ns", first.Rev); !errors.Is(err, kv.ErrExpired) {
		t.Fatalf("ListAt of an aged-out view: %v, want ErrExpired", err)
	}
}
