package member_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// raftContract is the "Raft and the store" table of docs/metrics.md: every
// series with its type and label names. leaderOnly series are exported by
// the leader only, one per member.
var raftContract = []struct {
	name, typ  string
	labels     []string
	leaderOnly bool
}{
	{name: "litek8s_raft_state", typ: "gauge", labels: []string{"state"}},
	{name: "litek8s_raft_term", typ: "gauge"},
	{name: "litek8s_raft_commit_index", typ: "gauge"},
	{name: "litek8s_raft_applied_index", typ: "gauge"},
	{name: "litek8s_raft_last_log_index", typ: "gauge"},
	{name: "litek8s_raft_snapshot_index", typ: "gauge"},
	{name: "litek8s_raft_leader_changes_total", typ: "counter"},
	{name: "litek8s_raft_has_leader", typ: "gauge"},
	{name: "litek8s_raft_propose_duration_seconds", typ: "histogram"},
	{name: "litek8s_raft_apply_duration_seconds", typ: "histogram"},
	{name: "litek8s_raft_apply_batch_entries", typ: "histogram"},
	{name: "litek8s_raft_snapshot_duration_seconds", typ: "histogram"},
	{name: "litek8s_raft_snapshot_failures_total", typ: "counter"},
	{name: "litek8s_raft_restore_duration_seconds", typ: "histogram"},
	{name: "litek8s_raft_log_bytes", typ: "gauge"},
	{name: "litek8s_raft_member_lag_entries", typ: "gauge", labels: []string{"member"}, leaderOnly: true},
	{name: "litek8s_raft_member_lag_seconds", typ: "gauge", labels: []string{"member"}, leaderOnly: true},
	{name: "litek8s_raft_resync_signals_sent_total", typ: "counter", labels: []string{"member"}, leaderOnly: true},
	{name: "litek8s_raft_resyncs_total", typ: "counter"},
	{name: "litek8s_raft_ready", typ: "gauge"},
	{name: "litek8s_store_objects", typ: "gauge"},
	{name: "litek8s_store_watchers", typ: "gauge"},
	{name: "litek8s_store_watchers_expired_total", typ: "counter", labels: []string{"reason"}},
	{name: "litek8s_store_feed_window_revisions", typ: "gauge"},
	{name: "litek8s_store_read_index_duration_seconds", typ: "histogram", labels: []string{"role"}},
}

// TestRaftMetrics scrapes every member of a 3-member cluster after some
// writes, consistent reads and a watch, through the API (admin token) and
// the metrics-only listener, and checks the Raft and store series of the
// contract.
func TestRaftMetrics(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft, func(cfg *member.Config) { cfg.MetricsAddr = "127.0.0.1:0" })
	ctx := t.Context()
	l, f := c.WaitLeader(), c.Follower()
	for i := range 5 {
		if _, err := c.PlainClientset(f).CoreV1().ConfigMaps("default").Create(ctx, configMap(fmt.Sprintf("cm-%d", i),
			map[string]string{"k": "v"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range []int{l, f} { // consistent reads: a read-index wait in each role
		if _, err := c.PlainClientset(i).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := c.PlainClientset(f).CoreV1().ConfigMaps("default").Watch(wctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// Through the API with the admin token, and from the metrics-only
	// listener (the same registry, without credentials).
	membertest.Eventually(t, 10*time.Second, func() error {
		var leaders []int
		for i := range c.N() {
			s, err := scrape(t, c, i, true)
			if err != nil {
				return err
			}
			if err := checkRaftSeries(s, i == c.WaitLeader(), c.N()); err != nil {
				return fmt.Errorf("member %d: %w", i, err)
			}
			ls, err := scrape(t, c, i, false)
			if err != nil {
				return err
			}
			if err := checkRaftSeries(ls, i == c.WaitLeader(), c.N()); err != nil {
				return fmt.Errorf("member %d, metrics listener: %w", i, err)
			}
			if s.value("litek8s_raft_state", "state", "Leader") == 1 {
				leaders = append(leaders, i)
			}
			if s.value("litek8s_store_watchers") < 1 && i == f {
				return fmt.Errorf("member %d: no watcher counted", i)
			}
			if s.value("litek8s_store_read_index_duration_seconds_count", "role", "leader") < 1 && i == l ||
				s.value("litek8s_store_read_index_duration_seconds_count", "role", "follower") < 1 && i == f {
				return fmt.Errorf("member %d: no read-index wait counted", i)
			}
		}
		if len(leaders) != 1 {
			return fmt.Errorf("members %v report litek8s_raft_state{state=\"Leader\"} 1, want exactly one", leaders)
		}
		return nil
	})

	for i := range c.N() {
		// The metrics-only listener serves nothing else.
		base := "http://" + c.Member(i).MetricsAddr()
		for _, tc := range []struct {
			method, path string
			want         int
		}{
			{"GET", "/readyz", http.StatusNotFound},
			{"GET", "/api/v1/configmaps", http.StatusNotFound},
			{"POST", "/metrics", http.StatusMethodNotAllowed},
		} {
			if code := httpCode(t, http.DefaultClient, tc.method, base+tc.path, ""); code != tc.want {
				t.Errorf("member %d, metrics listener: %s %s: %d, want %d", i, tc.method, tc.path, code, tc.want)
			}
		}
		// On the API, /metrics needs a user RBAC lets get it (the admin
		// token's is in system:masters): anonymous gets 403, a wrong token 401.
		for tok, want := range map[string]int{"": http.StatusForbidden, "wrong": http.StatusUnauthorized} {
			client := &http.Client{Transport: c.Transport(i)}
			if code := httpCode(t, client, "GET", c.Member(i).URL()+"/metrics", tok); code != want {
				t.Errorf("member %d: GET /metrics with token %q: %d, want %d", i, tok, code, want)
			}
		}
	}
	t.Run("promtool", func(t *testing.T) {
		path, err := exec.LookPath("promtool")
		if err != nil {
			t.Skip("promtool not on PATH (Debian package prometheus)")
		}
		for i := range c.N() {
			s, err := scrape(t, c, i, true)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(t.Context(), path, "check", "metrics")
			cmd.Stdin = bytes.NewReader(s.raw)
			if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
				t.Errorf("member %d: promtool check metrics: %v\n%s", i, err, out)
			}
		}
	})
}

// checkRaftSeries checks that s has every series of raftContract with its
// type and labels (the leader-only ones only on the leader, one per
// member), hashicorp/raft's bridged series, and sensible values.
func checkRaftSeries(s *scraped, leader bool, members int) error {
	var errs []error
	for _, want := range raftContract {
		typ, samples := s.types[want.name], s.family(want.name)
		if want.leaderOnly && !leader {
			if want.name != "litek8s_raft_resync_signals_sent_total" && len(samples) > 0 { // counters stay after a term
				errs = append(errs, fmt.Errorf("%s exported by a follower", want.name))
			}
			continue
		}
		if typ != want.typ {
			errs = append(errs, fmt.Errorf("%s: type %q, want %q", want.name, typ, want.typ))
		}
		if len(samples) == 0 {
			errs = append(errs, fmt.Errorf("%s: no series", want.name))
		}
		for _, sm := range samples {
			var names []string
			for k := range sm.labels {
				if k != "le" && k != "quantile" {
					names = append(names, k)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, want.labels) {
				errs = append(errs, fmt.Errorf("%s: labels %v, want %v", sm.name, names, want.labels))
			}
		}
		if want.leaderOnly && want.typ == "gauge" && len(samples) != members {
			errs = append(errs, fmt.Errorf("%s: %d series, want one per member (%d)", want.name, len(samples), members))
		}
	}
	if got := len(s.family("litek8s_raft_state")); got != 4 {
		errs = append(errs, fmt.Errorf("litek8s_raft_state: %d series, want 4", got))
	}
	for _, name := range []string{"litek8s_raft_applied_index", "litek8s_raft_commit_index", "litek8s_raft_last_log_index",
		"litek8s_raft_term", "litek8s_raft_has_leader", "litek8s_raft_ready", "litek8s_store_objects",
		"litek8s_store_feed_window_revisions", "litek8s_raft_log_bytes", "litek8s_raft_leader_changes_total",
		"litek8s_raft_apply_duration_seconds_count", "litek8s_raft_apply_batch_entries_count"} {
		if v := s.value(name); v <= 0 {
			errs = append(errs, fmt.Errorf("%s = %v, want > 0", name, v))
		}
	}
	if leader {
		if v := s.value("litek8s_raft_propose_duration_seconds_count"); v <= 0 {
			errs = append(errs, fmt.Errorf("leader: litek8s_raft_propose_duration_seconds_count = %v, want > 0", v))
		}
	}
	// hashicorp/raft's own metrics, bridged: a counter, a summary (timer)
	// and a gauge every member emits.
	for _, name := range []string{"raft_apply_total", "raft_commit_time", "raft_peers"} {
		if len(s.family(name)) == 0 {
			errs = append(errs, fmt.Errorf("%s: no series (hashicorp/raft's metrics bridged)", name))
		}
	}
	return errors.Join(errs...)
}

// scraped is one /metrics answer in the text format.
type scraped struct {
	raw     []byte
	types   map[string]string // by family name
	samples []sample
}

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape gets member i's /metrics through the API with the admin token
// (api) or from its metrics-only listener.
func scrape(t *testing.T, c *membertest.Cluster, i int, api bool) (*scraped, error) {
	url, client := "http://"+c.Member(i).MetricsAddr()+"/metrics", http.DefaultClient
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if api {
		client = &http.Client{Transport: c.Transport(i)}
		req, err = http.NewRequestWithContext(t.Context(), "GET", c.Member(i).URL()+"/metrics", nil)
		if err == nil {
			req.Header.Set("Authorization", "Bearer "+c.Token())
		}
	}
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, raw)
	}
	return parseMetrics(raw)
}

// parseMetrics parses the Prometheus text format as litek8s writes it
// (no timestamps, label values without commas, quotes or escapes).
func parseMetrics(raw []byte) (*scraped, error) {
	s := &scraped{raw: raw, types: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			s.types[name] = typ
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("bad sample line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("bad sample line %q: %w", line, err)
		}
		sm := sample{name: line[:i], labels: map[string]string{}, value: v}
		if name, ls, ok := strings.Cut(sm.name, "{"); ok {
			sm.name = name
			for _, kv := range strings.Split(strings.TrimSuffix(ls, "}"), ",") {
				k, v, _ := strings.Cut(kv, "=")
				sm.labels[k] = strings.Trim(v, `"`)
			}
		}
		s.samples = append(s.samples, sm)
	}
	return s, sc.Err()
}

// family returns the samples of family name (a histogram's or summary's
// _bucket, _sum and _count included).
func (s *scraped) family(name string) []sample {
	var out []sample
	for _, sm := range s.samples {
		if sm.name == name || (s.types[name] == "histogram" || s.types[name] == "summary") &&
			(sm.name == name+"_bucket" || sm.name == name+"_sum" || sm.name == name+"_count") {
			out = append(out, sm)
		}
	}
	return out
}

// value returns the value of the sample name with the given label pairs
// (-1 when there is none).
func (s *scraped) value(name string, labelPairs ...string) float64 {
next:
	for _, sm := range s.samples {
		if sm.name != name {
			continue
		}
		for i := 0; i+1 < len(labelPairs); i += 2 {
			if sm.labels[labelPairs[i]] != labelPairs[i+1] {
				continue next
			}
		}
		return sm.value
	}
	return -1
}

func httpCode(t *testing.T, client *http.Client, method, url, token string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
