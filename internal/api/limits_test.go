package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/litek8s/litek8s/internal/api"
	"github.com/litek8s/litek8s/internal/member/membertest"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// listRV is the resourceVersion of a list of the read namespace's
// ConfigMaps and their names: what a refused write must leave alone.
func (s *readServer) listRV(tb testing.TB) string {
	tb.Helper()
	code, _, b := s.do(tb, http.MethodGet, "/api/v1/namespaces/read/configmaps", "", "")
	if code != http.StatusOK {
		tb.Fatalf("list: %d %s", code, b)
	}
	var l struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
		Items    []json.RawMessage                `json:"items"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("%s/%d", l.Metadata.ResourceVersion, len(l.Items))
}

// wantBody checks an answer's code and its exact body (a Status, compared
// byte for byte: key order included).
func wantBody(tb testing.TB, what string, code int, body []byte, wantCode int, want string) {
	tb.Helper()
	if code != wantCode || string(bytes.TrimSpace(body)) != want {
		tb.Errorf("%s: %d %s\nwant %d %s", what, code, body, wantCode, want)
	}
}

// TestBodyLimit: a body over 3 MiB is kube's 413, whether its
// Content-Length says so or it is chunked, and nothing is stored.
func TestBodyLimit(t *testing.T) {
	s := newReadServer(t, nil)
	golden, err := os.ReadFile("testdata/golden/kube-1.37/errors/413-body-too-large.json")
	if err != nil {
		t.Fatal(err)
	}
	want := string(bytes.TrimSpace(golden))
	before := s.listRV(t)
	huge := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"huge"},"data":{"big":"` +
		strings.Repeat("x", 3<<20) + `"}}`
	code, _, b := s.do(t, http.MethodPost, "/api/v1/namespaces/read/configmaps", "", huge)
	wantBody(t, "Content-Length", code, b, http.StatusRequestEntityTooLarge, want)

	// chunked: no Content-Length, refused while it is read
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/api/v1/namespaces/read/configmaps", struct{ io.Reader }{strings.NewReader(huge)})
	req.ContentLength = -1 // unknown: sent chunked
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	wantBody(t, "chunked", resp.StatusCode, b, http.StatusRequestEntityTooLarge, want)

	// the limit holds for every body: a patch, and a write of a small limit
	s2 := newReadServer(t, func(c *api.Config) { c.Limits.MaxRequestBodyBytes = 100 })
	code, _, b = s2.do(t, http.MethodPost, "/api/v1/namespaces/read/configmaps", "", configMapBody(strings.Repeat("a", 90)))
	wantBody(t, "small limit", code, b, http.StatusRequestEntityTooLarge,
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is 100","reason":"RequestEntityTooLarge","code":413}`)
	if after := s.listRV(t); after != before {
		t.Errorf("the store changed: %s, then %s", before, after)
	}
}

// TestObjectSizeLimit: an object whose stored form would be over
// MaxObjectBytes is refused with a 413 before it is proposed, on create
// and when a patch grows it; the stored object is unchanged. Go's JSON
// encoder writes '<' as \u003c, so a small body can make a big object.
func TestObjectSizeLimit(t *testing.T) {
	s := newReadServer(t, nil)
	cm := func(name, key string, n int) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"` + key + `":"` + strings.Repeat("<", n) + `"}}`
	}
	before := s.listRV(t)
	code, _, b := s.do(t, http.MethodPost, "/api/v1/namespaces/read/configmaps", "", cm("grown", "a", 300_000))
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), `"reason":"RequestEntityTooLarge"`) ||
		!strings.Contains(string(b), `ConfigMap \"grown\" would be stored as 1800`) || !strings.Contains(string(b), "limit is 1572864") {
		t.Fatalf("create: %d %s", code, b)
	}
	if after := s.listRV(t); after != before {
		t.Fatalf("the store changed: %s, then %s", before, after)
	}
	rv := s.create(t, "/api/v1/namespaces/read/configmaps", cm("grown", "a", 200_000))
	for _, c := range []struct{ name, method, ctype, body string }{
		{"merge patch", http.MethodPatch, "application/merge-patch+json", `{"data":{"b":"` + strings.Repeat("<", 100_000) + `"}}`},
		{"json patch", http.MethodPatch, "application/json-patch+json", `[{"op":"add","path":"/data/b","value":"` + strings.Repeat("&", 100_000) + `"}]`},
		{"update", http.MethodPut, "application/json", cm("grown", "a", 300_000)},
	} {
		req, _ := http.NewRequest(c.method, s.URL+"/api/v1/namespaces/read/configmaps/grown", strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer t")
		req.Header.Set("Content-Type", c.ctype)
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), `"reason":"RequestEntityTooLarge"`) {
			t.Errorf("%s: %d %.300s", c.name, resp.StatusCode, b)
		}
	}
	code, _, b = s.do(t, http.MethodGet, "/api/v1/namespaces/read/configmaps/grown", "", "")
	if code != http.StatusOK || fmt.Sprint(rvOf(t, b)) != rv {
		t.Errorf("after the refused writes: %d, resourceVersion %d, want %s", code, rvOf(t, b), rv)
	}
}

// TestInflightLimits: over a class's limit a request gets kube's 429 with
// Retry-After: 1 while the other classes, the health paths and the
// requests of the member's own controllers still get through.
func TestInflightLimits(t *testing.T) {
	var local http.Handler
	reg := prometheus.NewRegistry()
	s := newReadServer(t, func(c *api.Config) {
		c.Limits.MaxRequestsInflight, c.Limits.MaxMutatingRequestsInflight, c.Limits.MaxWatchesInflight = 1, 1, 2
		c.Metrics = reg
	})
	// Every reason is exported at 0 before anything is refused.
	if got := refusedCounts(t, reg); len(got) != 4 || got["max-requests-inflight"]+got["max-mutating-requests-inflight"]+
		got["max-watches-inflight"]+got["disruption-budget"] != 0 {
		t.Errorf("litek8s_api_refused_requests_total before any refusal: %v", got)
	}
	local = s.api.LocalOnly()
	const want429 = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Too many requests, please try again later.","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}`
	check429 := func(what, method, target, body string) {
		t.Helper()
		code, h, b := s.do(t, method, target, "", body)
		wantBody(t, what, code, b, http.StatusTooManyRequests, want429)
		if h.Get("Retry-After") != "1" {
			t.Errorf("%s: Retry-After %q", what, h.Get("Retry-After"))
		}
	}
	// Two watches fill their class.
	s.watch(t, "/api/v1/namespaces/read/configmaps?watch=true", "")
	s.watch(t, "/api/v1/namespaces/read/configmaps?watch=1", "")
	check429("third watch", http.MethodGet, "/api/v1/namespaces/read/configmaps?watch=true", "")

	// The held requests get connections of their own: a request whose body
	// cannot be sent again is not retried on a kept-alive connection the
	// server has just closed.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var wg sync.WaitGroup
	defer wg.Wait()
	// A create whose body never ends holds the one mutating slot until its
	// pipe is closed (its timeout is a minute). A probe may take the slot
	// the moment it arrives (then it gets 429 itself): then another one.
	var pipes []*io.PipeWriter
	defer func() {
		for _, pw := range pipes {
			pw.Close()
		}
	}()
	holdWrite := func() <-chan struct{} {
		pr, pw := io.Pipe()
		pipes = append(pipes, pw)
		done := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done)
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/api/v1/namespaces/read/configmaps?timeout=60s", pr)
			req.Header.Set("Authorization", "Bearer t")
			req.Header.Set("Content-Type", "application/json")
			if resp, err := fresh.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		pw.Write([]byte(`{"apiVersion":"v1",`))
		return done
	}
	held := holdWrite()
	// Once it is in its handler, the next write is refused (one that gets
	// through stores nothing: {}); reads still pass.
	membertest.Eventually(t, 20*time.Second, func() error {
		select {
		case <-held:
			held = holdWrite()
		default:
		}
		if w, _, _ := s.do(t, http.MethodPost, "/api/v1/namespaces/read/configmaps", "", "{}"); w != http.StatusTooManyRequests {
			return fmt.Errorf("write %d while the held one should fill its class", w)
		}
		return nil
	})
	check429("second write", http.MethodPost, "/api/v1/namespaces/read/configmaps", configMapBody("refused"))
	if code, _, b := s.do(t, http.MethodGet, "/api/v1/namespaces/read/configmaps", "", ""); code != http.StatusOK {
		t.Errorf("read while only writes are full: %d %s", code, b)
	}
	// A read at a revision the store has not reached waits (3 s): it holds
	// the one read-only slot. On a loaded machine a hold may be over before
	// the checks ran: then another one is started.
	membertest.Eventually(t, 30*time.Second, func() error {
		done := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done)
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v1/namespaces/read/configmaps?resourceVersion=999999999", http.NoBody)
			req.Header.Set("Authorization", "Bearer t")
			if resp, err := fresh.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		defer func() { <-done }()
		for {
			select {
			case <-done:
				return errors.New("the held read ended before the checks ran")
			default:
			}
			r, _, _ := s.do(t, http.MethodGet, "/api/v1/namespaces/read/configmaps", "", "")
			if r != http.StatusTooManyRequests {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			for _, p := range []string{"/api/v1/namespaces/read/configmaps", "/version"} {
				if code, h, b := s.do(t, http.MethodGet, p, "", ""); code != http.StatusTooManyRequests ||
					strings.TrimSpace(string(b)) != want429 || h.Get("Retry-After") != "1" {
					return fmt.Errorf("%s while reads are full: %d %s (Retry-After %q)", p, code, b, h.Get("Retry-After"))
				}
			}
			for _, p := range []string{"/livez", "/readyz", "/healthz"} {
				if code, _, b := s.do(t, http.MethodGet, p, "", ""); code != http.StatusOK {
					t.Errorf("%s while saturated: %d %s", p, code, b)
				}
			}
			return nil
		}
	})
	// The member's own controllers are never refused for load.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/read/configmaps", nil)
	req.Header.Set("Authorization", "Bearer t")
	local.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("in-process read while saturated: %d %s", rec.Code, rec.Body)
	}
	for _, pw := range pipes {
		pw.Close()
	}
	wg.Wait()
	// Once they are answered, their slots are free again.
	if code, _, b := s.do(t, http.MethodGet, "/api/v1/namespaces/read/configmaps", "", ""); code != http.StatusOK {
		t.Errorf("read after the held ones: %d %s", code, b)
	}
	if code, _, b := s.do(t, http.MethodGet, "/api/v1/namespaces/read/configmaps/refused", "", ""); code != http.StatusNotFound {
		t.Errorf("the refused create: %d %s", code, b)
	}
	// Each class's refusals are counted under its limit's flag (at least
	// the ones checked above; the probes may have been refused more).
	got := refusedCounts(t, reg)
	for reason, least := range map[string]float64{"max-requests-inflight": 2, "max-mutating-requests-inflight": 2, "max-watches-inflight": 1} {
		if got[reason] < least {
			t.Errorf("litek8s_api_refused_requests_total{reason=%q} = %v, want at least %v (all: %v)", reason, got[reason], least, got)
		}
	}
	if got["disruption-budget"] != 0 {
		t.Errorf("no eviction was refused, yet: %v", got)
	}
}

// refusedCounts reads litek8s_api_refused_requests_total from reg, by
// reason.
func refusedCounts(tb testing.TB, reg prometheus.Gatherer) map[string]float64 {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "litek8s_api_refused_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					out[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

func body0(s string) io.Reader {
	if s == "" {
		return http.NoBody
	}
	return strings.NewReader(s)
}

// TestRequestTimeout: a request that is not a watch ends at its deadline
// (?timeout=, else RequestTimeout) with kube's 504, whether it waits on
// the store or on a client that does not send its body; a malformed
// timeout is kube's 400.
func TestRequestTimeout(t *testing.T) {
	s := newReadServer(t, func(c *api.Config) { c.Limits.RequestTimeout = 1500 * time.Millisecond })
	const want504 = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}`
	before := s.listRV(t)
	for _, c := range []struct {
		name, target string
		max          time.Duration
	}{
		{"timeout=500ms", "/api/v1/namespaces/read/configmaps?resourceVersion=999999999&timeout=500ms", time.Second},
		{"RequestTimeout", "/api/v1/namespaces/read/configmaps?resourceVersion=999999999&timeout=0s", 3 * time.Second},
	} {
		// RequestTimeout (1.5 s) ends the wait before the store's own 3 s.
		start := time.Now()
		code, _, b := s.do(t, http.MethodGet, c.target, "", "")
		wantBody(t, c.name, code, b, http.StatusGatewayTimeout, want504)
		if d := time.Since(start); d > c.max {
			t.Errorf("%s: answered after %v", c.name, d)
		}
	}

	// A body that never ends: the read deadline ends the request.
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMap",`))
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/api/v1/namespaces/read/configmaps?timeout=1s", pr)
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantBody(t, "slow body", resp.StatusCode, b, http.StatusGatewayTimeout, want504)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("slow body: answered after %v", d)
	}

	code, _, b := s.do(t, http.MethodGet, "/api/v1/namespaces/read/configmaps?timeout=soon", "", "")
	wantBody(t, "malformed", code, b, http.StatusBadRequest,
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid timeout specified in the request URL - time: invalid duration \"soon\"","reason":"BadRequest","code":400}`)
	if after := s.listRV(t); after != before {
		t.Errorf("the store changed: %s, then %s", before, after)
	}
}

// TestWatchServerTimeout: a watch without timeoutSeconds ends between
// MinRequestTimeout and twice it, cleanly (no ERROR event).
func TestWatchServerTimeout(t *testing.T) {
	s := newReadServer(t, func(c *api.Config) { c.Limits.MinRequestTimeout = time.Second })
	start := time.Now()
	w := s.watch(t, "/api/v1/namespaces/read/configmaps?watch=true", "")
	rest, err := io.ReadAll(w.r)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second || d > 4*time.Second { // 1 s to 2 s, and slack for -race
		t.Errorf("the watch ended after %v, want 1 s to 2 s", d)
	}
	if bytes.Contains(rest, []byte("ERROR")) {
		t.Errorf("the watch ended with %s", rest)
	}
}

// TestWatchSlowClient: a watcher that stops reading while a thousand
// large events are written does not make the member buffer them: the
// store ends its watch once its buffer (raftstore's WatchBuffer, 100 here
// so that the test writes little under -race) is full, and when the client
// reads again it finds fewer events than were written and then an ERROR
// event with kube's 410 Expired Status.
func TestWatchSlowClient(t *testing.T) {
	srv := newAPIServerStore(t, func(c *raftstore.Config) { c.WatchBuffer = 100 }, nil, "read")
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	s := &readServer{Server: hs, api: srv}
	rv := s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody("slow-0"))

	// A raw connection, which the test stops reading after the response's
	// headers. (A tiny SO_RCVBUF would stall loopback TCP itself: its
	// window would never open by a whole segment again.)
	d := net.Dialer{}
	conn, err := d.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/v1/namespaces/read/configmaps?watch=true&resourceVersion=%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n", rv)
	br := bufio.NewReaderSize(conn, 4<<10)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %v %v", resp, err)
	}

	// 1000 updates of 16 KiB: 16 MB, far more than the kernel's socket
	// buffers (a few MB) and the 100 events the watcher may have queued.
	const writes, size = 1000, 16 << 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("slow-%d", g+1)
			for i := range writes / 8 {
				body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"k":"` +
					strings.Repeat(string(rune('a'+i%26)), size) + `"}}`
				method, target := http.MethodPut, "/api/v1/namespaces/read/configmaps/"+name
				if i == 0 {
					method, target = http.MethodPost, "/api/v1/namespaces/read/configmaps"
				}
				req := httptest.NewRequest(method, target, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer t")
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code >= 300 {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("%s %s: %d %.200s", method, target, rec.Code, rec.Body))
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Fatal(failed)
	}

	// Read again: some events, then the ERROR that ended the watch.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	events, last := 0, ""
	lines := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		l, err := lines.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %d events: %v (%.200s)", events, err, l)
		}
		var ev struct {
			Type   string
			Object json.RawMessage
		}
		if err := json.Unmarshal(l, &ev); err != nil {
			t.Fatalf("event %d: %v", events, err)
		}
		if ev.Type == "ERROR" {
			last = string(ev.Object)
			break
		}
		events++
	}
	if events >= writes {
		t.Errorf("the watcher got all %d events: nothing bounded its buffer", events)
	}
	const want = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the watch fell behind the change feed; relist","reason":"Expired","code":410}`
	if last != want {
		t.Errorf("ERROR event %s\nwant %s", last, want)
	}
	t.Logf("%d of %d events reached the watcher before its watch ended", events, writes)
}

// TestEvictionRefusalCounted: an eviction a PodDisruptionBudget holds back
// (here: one the disruption controller has not processed yet) is kube's
// 429, counted under reason disruption-budget; the pod stays.
func TestEvictionRefusalCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := newReadServer(t, func(c *api.Config) { c.Metrics = reg })
	s.create(t, "/api/v1/namespaces/read/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}`)
	s.create(t, "/api/v1/namespaces/read/pods",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"app":"budget"}},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	// A pod that is not running would be deleted whatever the budget.
	code, _, b := s.do(t, http.MethodGet, "/api/v1/namespaces/read/pods/p", "", "")
	var pod map[string]any
	if err := json.Unmarshal(b, &pod); code != http.StatusOK || err != nil {
		t.Fatalf("get pod: %d %v %s", code, err, b)
	}
	pod["status"] = map[string]any{"phase": "Running"}
	running, _ := json.Marshal(pod)
	if code, _, b := s.do(t, http.MethodPut, "/api/v1/namespaces/read/pods/p/status", "", string(running)); code != http.StatusOK {
		t.Fatalf("pod status: %d %s", code, b)
	}
	s.create(t, "/apis/policy/v1/namespaces/read/poddisruptionbudgets",
		`{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"b"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"budget"}}}}`)
	code, _, b = s.do(t, http.MethodPost, "/api/v1/namespaces/read/pods/p/eviction", "",
		`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"}}`)
	if code != http.StatusTooManyRequests || !strings.Contains(string(b), "is still being processed") {
		t.Fatalf("eviction: %d %s, want 429 while the budget is not processed", code, b)
	}
	if code, _, b := s.do(t, http.MethodGet, "/api/v1/namespaces/read/pods/p", "", ""); code != http.StatusOK {
		t.Errorf("the pod after a refused eviction: %d %s", code, b)
	}
	got := refusedCounts(t, reg)
	if got["disruption-budget"] != 1 || got["max-requests-inflight"]+got["max-mutating-requests-inflight"]+got["max-watches-inflight"] != 0 {
		t.Errorf("litek8s_api_refused_requests_total %v, want one disruption-budget refusal", got)
	}
}
