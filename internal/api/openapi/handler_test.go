package openapi

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// get serves one request through a mux with h registered.
func get(t *testing.T, h *Handler, method, target string, header map[string]string) *http.Response {
	t.Helper()
	mux := http.NewServeMux()
	h.Register(mux)
	req := httptest.NewRequestWithContext(t.Context(), method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	return rec.Result()
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// index fetches and decodes /openapi/v3.
func index(t *testing.T, h *Handler) map[string]string {
	t.Helper()
	resp := get(t, h, http.MethodGet, "/openapi/v3?timeout=32s", map[string]string{"Accept": "application/json, */*"})
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
		resp.Header.Get("Cache-Control") != "no-cache, private" || strings.HasSuffix(body, "\n") {
		t.Fatalf("index: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	var idx struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal([]byte(body), &idx); err != nil {
		t.Fatal(err)
	}
	urls := make(map[string]string)
	for k, v := range idx.Paths {
		urls[k] = v.ServerRelativeURL
	}
	return urls
}

func TestIndexHashes(t *testing.T) {
	h := newServedHandler(t)
	urls := index(t, h)
	if len(urls) != 3 {
		t.Fatalf("index has %v, want api/v1, apis/apps/v1, apis/coordination.k8s.io/v1", urls)
	}
	for key, url := range urls {
		resp := get(t, h, http.MethodGet, url, map[string]string{"Accept": "application/json"})
		body := readBody(t, resp)
		hash := fmt.Sprintf("%X", sha512.Sum512([]byte(body)))
		if url != "/openapi/v3/"+key+"?hash="+hash {
			t.Errorf("%s: url %s, body hash %s", key, url, hash)
		}
		if resp.Header.Get("Etag") != `"`+hash+`"` {
			t.Errorf("%s: Etag %s", key, resp.Header.Get("Etag"))
		}
	}
}

func TestDocumentHeaders(t *testing.T) {
	h := newServedHandler(t)
	h.now = func() time.Time { return time.Date(2026, 11, 30, 10, 0, 19, 0, time.UTC) }
	hashed := index(t, h)["apis/apps/v1"]
	for _, tc := range []struct {
		name, target       string
		cacheControl       string
		expires            string
		wantStatus         int
		wantLocationSuffix string
	}{
		{"current hash", hashed, "public, immutable", "Tue, 30 Nov 2027 10:00:19 UTC", http.StatusOK, ""},
		{"no hash", "/openapi/v3/apis/apps/v1", "no-cache, private", "", http.StatusOK, ""},
		{"stale hash", "/openapi/v3/apis/apps/v1?hash=ABC", "no-cache, private", "", http.StatusMovedPermanently, hashed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := get(t, h, http.MethodGet, tc.target, map[string]string{"Accept": "application/json"})
			hd := resp.Header
			if resp.StatusCode != tc.wantStatus || hd.Get("Cache-Control") != tc.cacheControl || hd.Get("Expires") != tc.expires {
				t.Fatalf("%d Cache-Control %q Expires %q", resp.StatusCode, hd.Get("Cache-Control"), hd.Get("Expires"))
			}
			if tc.wantStatus == http.StatusMovedPermanently {
				if hd.Get("Location") != tc.wantLocationSuffix {
					t.Errorf("Location %q, want %q", hd.Get("Location"), tc.wantLocationSuffix)
				}
				return
			}
			if hd.Get("Content-Type") != "application/json" || hd.Get("Accept-Ranges") != "bytes" ||
				hd.Get("Last-Modified") == "" || hd.Get("Etag") == "" || hd.Get("Vary") != "Accept" {
				t.Errorf("headers %v", hd)
			}
		})
	}
}

func TestDocumentNegotiation(t *testing.T) {
	h := newServedHandler(t)
	url := index(t, h)["api/v1"]
	etag := get(t, h, http.MethodGet, url, nil).Header.Get("Etag")
	for _, tc := range []struct {
		name, method, target string
		header               map[string]string
		want                 int
		wantType             string
	}{
		{"no accept", http.MethodGet, url, nil, http.StatusOK, "application/json"},
		{"any", http.MethodGet, url, map[string]string{"Accept": "*/*"}, http.StatusOK, "application/json"},
		{"protobuf only", http.MethodGet, url, map[string]string{"Accept": "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"},
			http.StatusNotAcceptable, "text/plain; charset=utf-8"},
		{"revalidation", http.MethodGet, url, map[string]string{"If-None-Match": etag}, http.StatusNotModified, ""},
		{"head", http.MethodHead, url, nil, http.StatusOK, "application/json"},
		{"unknown group", http.MethodGet, "/openapi/v3/apis/batch/v1", nil, http.StatusNotFound, "text/plain; charset=utf-8"},
		{"bare prefix", http.MethodGet, "/openapi/v3/", nil, http.StatusNotFound, "text/plain; charset=utf-8"},
		{"post", http.MethodPost, url, nil, http.StatusMethodNotAllowed, "text/plain; charset=utf-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := get(t, h, tc.method, tc.target, tc.header)
			if resp.StatusCode != tc.want || resp.Header.Get("Content-Type") != tc.wantType {
				t.Errorf("%d %q, want %d %q", resp.StatusCode, resp.Header.Get("Content-Type"), tc.want, tc.wantType)
			}
		})
	}
}

// TestConcurrentReads: the handler is read-only after New (run with -race).
func TestConcurrentReads(t *testing.T) {
	h := newServedHandler(t)
	srv := httptest.NewServer(func() http.Handler { mux := http.NewServeMux(); h.Register(mux); return mux }())
	t.Cleanup(srv.Close)
	urls := index(t, h)
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			for _, url := range urls {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+url, nil)
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s: %d", url, resp.StatusCode)
				}
			}
		})
	}
}

func TestNewIsFast(t *testing.T) {
	start := time.Now()
	newServedHandler(t)
	elapsed := time.Since(start)
	t.Logf("New(%d kinds) took %v", len(servedKinds()), elapsed)
	if elapsed > 5*time.Second { // generous: shared CI machines; typically ~0.2s cold
		t.Errorf("New took %v", elapsed)
	}
}
