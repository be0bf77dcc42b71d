package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/api"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// newAPIServer is a real single-member store (Raft on 127.0.0.1:0, its log
// on disk) behind the API handler, with the given namespaces created.
func newAPIServer(tb testing.TB, tweak func(*api.Config), namespaces ...string) *api.Server {
	tb.Helper()
	return newAPIServerStore(tb, nil, tweak, namespaces...)
}

// newAPIServerStore is newAPIServer with the store's configuration
// adjusted by storeTweak too.
func newAPIServerStore(tb testing.TB, storeTweak func(*raftstore.Config), tweak func(*api.Config), namespaces ...string) *api.Server {
	tb.Helper()
	sc := raftstore.DefaultConfig()
	sc.DataDir, sc.RaftAddr, sc.Bootstrap = tb.TempDir(), "127.0.0.1:0", true
	sc.HeartbeatTimeout, sc.ElectionTimeout, sc.LeaderLeaseTimeout = 100*time.Millisecond, 100*time.Millisecond, 50*time.Millisecond
	sc.Derive = api.Derive
	sc.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if storeTweak != nil {
		storeTweak(&sc)
	}
	st, err := raftstore.Open(sc)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	ac := api.DefaultConfig()
	ac.Token, ac.Logger = "t", sc.Logger
	if tweak != nil {
		tweak(&ac)
	}
	srv, err := api.New(ac, st)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if err := srv.EnsureNamespaces(ctx, namespaces...); err == nil {
			return srv
		} else if ctx.Err() != nil {
			tb.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readServer is a real single-member store behind the API, served over
// HTTP (watches stream), with the "read" namespace.
type readServer struct {
	*httptest.Server
	api *api.Server
}

func newReadServer(tb testing.TB, tweak func(*api.Config)) *readServer {
	tb.Helper()
	srv := newAPIServer(tb, tweak, "read", "other")
	hs := httptest.NewServer(srv)
	tb.Cleanup(hs.Close)
	return &readServer{Server: hs, api: srv}
}

// do sends a request and returns the status, the headers and the body.
func (s *readServer) do(tb testing.TB, method, target, accept, body string) (int, http.Header, []byte) {
	tb.Helper()
	req, err := http.NewRequest(method, s.URL+target, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer t")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// create POSTs an object and returns its resourceVersion.
func (s *readServer) create(tb testing.TB, collection, body string) string {
	tb.Helper()
	code, _, b := s.do(tb, http.MethodPost, collection, "", body)
	if code != http.StatusCreated {
		tb.Fatalf("POST %s: %d %s", collection, code, b)
	}
	var m struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	return m.Metadata.ResourceVersion
}

// stream is an open watch read line by line.
type stream struct {
	tb   testing.TB
	r    *bufio.Reader
	resp *http.Response
}

func (s *readServer) watch(tb testing.TB, target, accept string) *stream {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+target, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer t")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cancel(); resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		tb.Fatalf("watch %s: %d %s", target, resp.StatusCode, b)
	}
	return &stream{tb: tb, r: bufio.NewReader(resp.Body), resp: resp}
}

// event is one JSON watch event, its object kept raw.
type event struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

func (w *stream) next() event {
	w.tb.Helper()
	l, err := w.r.ReadBytes('\n')
	if err != nil {
		w.tb.Fatalf("watch: %v (%q)", err, l)
	}
	var ev event
	if err := json.Unmarshal(l, &ev); err != nil {
		w.tb.Fatalf("watch line %q: %v", l, err)
	}
	return ev
}

// nextOf skips events until one of type typ.
func (w *stream) nextOf(typ string) event {
	w.tb.Helper()
	for {
		if ev := w.next(); ev.Type == typ {
			return ev
		}
	}
}

func rvOf(tb testing.TB, obj []byte) uint64 {
	tb.Helper()
	var m struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
	}
	if err := json.Unmarshal(obj, &m); err != nil {
		tb.Fatal(err)
	}
	var rv uint64
	if _, err := fmt.Sscan(m.Metadata.ResourceVersion, &rv); err != nil {
		tb.Fatalf("resourceVersion %q in %s", m.Metadata.ResourceVersion, obj)
	}
	return rv
}

func configMapBody(name string) string {
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","labels":{"app":"read"}},"data":{"k":"v"}}`
}
