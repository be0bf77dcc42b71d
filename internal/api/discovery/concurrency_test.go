package discovery

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestConcurrent serves many requests at once (run with -race): every
// answer must equal the one served alone.
func TestConcurrent(t *testing.T) {
	h, err := New(DefaultConfig(), testResources())
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	requests := []struct{ path, accept string }{
		{"/api", acceptDiscovery}, {"/apis", acceptDiscovery}, {"/api", ""}, {"/apis", ""},
		{"/apis/apps", ""}, {"/api/v1", ""}, {"/apis/apps/v1", ""}, {"/apis/nope", ""}, {"/apis", "application/xml"},
	}
	serve := func(i int) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, requests[i].path, nil)
		r.Header.Set("Accept", requests[i].accept)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w
	}
	want := make([][]byte, len(requests))
	for i := range requests {
		want[i] = serve(i).Body.Bytes()
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for n := range 50 {
				i := (g + n) % len(requests)
				if got := serve(i).Body.Bytes(); !bytes.Equal(got, want[i]) {
					t.Errorf("%s: answer differs under concurrency", requests[i].path)
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkServe(b *testing.B) {
	h, err := New(goldenConfig(), testResources())
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	etag := func() string {
		r := httptest.NewRequest(http.MethodGet, "/apis", nil)
		r.Header.Set("Accept", acceptDiscovery)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w.Header().Get("Etag")
	}()
	benchmarks := []struct {
		name, path, accept, ifNoneMatch string
	}{
		{"aggregated /apis", "/apis", acceptDiscovery, ""},
		{"aggregated /apis 304", "/apis", acceptDiscovery, etag},
		{"legacy /api/v1", "/api/v1", "application/json", ""},
		{"legacy /apis/apps/v1 protobuf-first", "/apis/apps/v1", acceptProtobuf, ""},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, bm.path, nil)
			r.Header.Set("Accept", bm.accept)
			if bm.ifNoneMatch != "" {
				r.Header.Set("If-None-Match", bm.ifNoneMatch)
			}
			b.ReportAllocs()
			for b.Loop() {
				mux.ServeHTTP(httptest.NewRecorder(), r)
			}
		})
	}
}
