package monitoring

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/test/proc"
)

// member is one member process and the address of its metrics-only
// listener (the Prometheus instance label).
type member struct {
	*proc.Proc
	metricsAddr string
}

// startCluster starts three member processes on 127.0.0.1 (node-1
// bootstraps, node-2 and node-3 join it), each with --metrics-addr and
// args, and waits until all three are ready.
// adminToken is the admin token of the clusters startCluster starts (the
// members keep only its hash): Prometheus scrapes the API's /metrics with
// it.
const adminToken = "monitoring-admin-token-0123456789"

func startCluster(t *testing.T, bin string, args ...string) []member {
	t.Helper()
	dir := t.TempDir()
	var ms []member
	start := func(extra ...string) {
		id := fmt.Sprintf("node-%d", len(ms)+1)
		addr := freeAddr(t)
		a := append([]string{"--metrics-addr", addr}, args...)
		p := proc.MustStart(t, bin, id, filepath.Join(dir, id), "127.0.0.1:0", "127.0.0.1:0", append(a, extra...)...)
		ms = append(ms, member{p, addr})
	}
	start("--admin-token", adminToken)
	token, err := os.ReadFile(filepath.Join(ms[0].Dir, "data", "tls", "join-token"))
	if err != nil {
		t.Fatal(err)
	}
	start("--join", ms[0].URL, "--join-token", strings.TrimSpace(string(token)))
	start("--join", ms[0].URL, "--join-token", strings.TrimSpace(string(token)))
	eventually(t, 60*time.Second, 100*time.Millisecond, func() error {
		for _, m := range ms {
			if code, err := m.Get(t.Context(), m.REST, "/readyz", nil); err != nil || code != http.StatusOK {
				return fmt.Errorf("%s /readyz: %d %v", m.ID, code, err)
			}
		}
		return nil
	})
	return ms
}

// seriesOn says where a series has data, by name prefix: on the leader
// only (the lag view, the controllers and the scheduler), on a follower
// (forwarded writes). Any other series must have data on every member.
var seriesOn = map[string]string{
	"litek8s_raft_member_lag_":               "leader",
	"litek8s_raft_resync_signals_sent_total": "leader",
	"litek8s_controller_resyncs_total":       "leader",
	"workqueue_":                             "leader",
	"scheduler_":                             "leader",
	"litek8s_api_forwarded_requests_total":   "follower",
}

func whereSeries(name string) string {
	where, longest := "every", 0
	for p, w := range seriesOn {
		if strings.HasPrefix(name, p) && len(p) > longest {
			where, longest = w, len(p)
		}
	}
	return where
}

// TestPrometheusScrapesCluster is acceptance item 1 of issue 7: a real
// Prometheus scrapes three member processes under load (through
// --metrics-addr, and through the API's /metrics with the admin token), with
// the alerting rules loaded. Every series the dashboard and the rules use
// has data on the members it belongs to, every dashboard query runs,
// every rule evaluates without error and none fires on this healthy
// cluster, and `promtool check metrics` says nothing about any member's
// /metrics.
func TestPrometheusScrapesCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three member processes and Prometheus")
	}
	lookPath(t, "prometheus")
	lookPath(t, "promtool")
	used := usedSeries(t)
	queries := dashboardQueries(t, loadDashboard(t))

	bin := proc.Build(t, "cmd/node")
	// Snapshots every few seconds under the load, so that their series move.
	ms := startCluster(t, bin, "--simulated-nodes", "3",
		"--snapshot-threshold", "500", "--trailing-logs", "1000", "--snapshot-interval", "1s")
	byInstance := map[string]member{}
	plain := scrapeJob{Name: "litek8s"}
	https := scrapeJob{Name: "litek8s-https",
		TokenFile: writeFile(t, "admin-token", adminToken),
		CAFile:    filepath.Join(ms[0].Dir, "data", "tls", "ca.crt")}
	for _, m := range ms {
		byInstance[m.metricsAddr] = m
		plain.Targets = append(plain.Targets, m.metricsAddr)
		https.Targets = append(https.Targets, m.APIAddr())
	}
	prom := startPrometheus(t, []scrapeJob{plain, https}, rulesPath)

	ctx, stopLoad := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var counts loadCounts
	var clients []*kubernetes.Clientset
	for _, m := range ms {
		clients = append(clients, m.Clientset(m.REST))
	}
	loadStart := time.Now()
	load(ctx, &wg, clients, &counts)
	defer func() {
		stopLoad()
		wg.Wait()
		t.Logf("load: %v", &counts)
	}()

	eventually(t, 60*time.Second, time.Second, func() error {
		targets, err := prom.targets(t.Context())
		if err != nil {
			return err
		}
		up := 0
		for _, tg := range targets {
			if tg.Health == "up" {
				up++
			} else if tg.LastError != "" {
				err = errors.Join(err, fmt.Errorf("%s %s: %s", tg.ScrapePool, tg.ScrapeURL, tg.LastError))
			}
		}
		if up != 2*len(ms) {
			return fmt.Errorf("%d of %d targets up: %v", up, 2*len(ms), err)
		}
		return nil
	})

	leader := func() (member, error) {
		s, err := prom.query(t.Context(), `litek8s_raft_state{job="litek8s", state="Leader"} == 1`)
		if err != nil {
			return member{}, err
		}
		if len(s) != 1 {
			return member{}, fmt.Errorf("%d members in the Leader state: %v", len(s), s)
		}
		return byInstance[s[0].Metric["instance"]], nil
	}
	var lead member
	eventually(t, 30*time.Second, time.Second, func() (err error) { lead, err = leader(); return err })

	// A resync of a follower: the leader signals it and it ends its
	// watches with 410 (the resync panels and series move).
	follower := ms[0]
	if follower.ID == lead.ID {
		follower = ms[1]
	}
	resync(t, lead, follower.ID)

	t.Run("series", func(t *testing.T) {
		eventually(t, 90*time.Second, 2*time.Second, func() error {
			if time.Since(loadStart) < 20*time.Second {
				return errors.New("load ran less than 20 s")
			}
			lead, err := leader()
			if err != nil {
				return err
			}
			return checkSeries(t.Context(), prom, used, byInstance, lead, loadStart)
		})
	})
	t.Run("dashboard queries", func(t *testing.T) {
		eventually(t, 30*time.Second, 2*time.Second, func() error {
			return checkDashboardQueries(t.Context(), prom, queries)
		})
	})
	t.Run("rules", func(t *testing.T) {
		eventually(t, 30*time.Second, time.Second, func() error {
			return checkRules(t.Context(), prom)
		})
	})
	t.Run("promtool check metrics", func(t *testing.T) {
		for _, m := range ms {
			checkMetrics(t, m)
		}
	})

	stopLoad()
	wg.Wait()
	if counts.writes.Load() == 0 || counts.lists.Load() == 0 || counts.events.Load() == 0 || counts.scales.Load() == 0 {
		t.Errorf("the load did not do every kind of work: %v", &counts)
	}
}

// resync asks the leader to make member id resync.
func resync(t *testing.T, leader member, id string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, leader.URL+"/admin/v1/members/"+id+"/resync", nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok := leader.REST.BearerToken; tok != "" { // else the kubeconfig's client certificate
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := leader.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("resync %s: %s: %s", id, resp.Status, b)
	}
}

// checkSeries reports the series the dashboard and the rules use that have
// no data since start where they should: on every member, on the leader,
// or on a follower (seriesOn).
func checkSeries(ctx context.Context, prom *prometheus, used map[string][]string, byInstance map[string]member, leader member, start time.Time) error {
	var missing []string
	for _, name := range sortedKeys(used) {
		sets, err := prom.series(ctx, fmt.Sprintf(`{__name__=%q, job="litek8s"}`, name), start)
		if err != nil {
			return err
		}
		has := map[string]bool{}
		for _, ls := range sets {
			if m, ok := byInstance[ls["instance"]]; ok {
				has[m.ID] = true
			}
		}
		var lacking []string
		switch where := whereSeries(name); where {
		case "leader":
			if !has[leader.ID] {
				lacking = append(lacking, "the leader "+leader.ID)
			}
		case "follower":
			if len(has) == 0 || (len(has) == 1 && has[leader.ID]) {
				lacking = append(lacking, "every follower")
			}
		default:
			for _, m := range byInstance {
				if !has[m.ID] {
					lacking = append(lacking, m.ID)
				}
			}
		}
		if len(lacking) > 0 {
			sort.Strings(lacking)
			missing = append(missing, fmt.Sprintf("%s (on %s; used by %s)", name, strings.Join(lacking, ", "), strings.Join(used[name], ", ")))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d series without data:\n\t%s", len(missing), strings.Join(missing, "\n\t"))
	}
	return nil
}

// legendLabel is a label a Grafana legend names: {{label}}.
var legendLabel = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// checkDashboardQueries runs every dashboard query (job litek8s, every
// member, a 15 s rate interval: four scrape intervals, as Grafana's
// $__rate_interval) and reports those that fail, return nothing, or
// return series without a label their legend shows.
func checkDashboardQueries(ctx context.Context, prom *prometheus, queries []query) error {
	var problems []string
	for _, q := range queries {
		expr := strings.ReplaceAll(q.expr, `job=~"$job"`, `job="litek8s"`)
		expr = expandGrafana(expr, "15s", ".*")
		res, err := prom.query(ctx, expr)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", q.where, err))
			continue
		case len(res) == 0:
			problems = append(problems, fmt.Sprintf("%s: no data for %s", q.where, expr))
			continue
		}
		for _, m := range legendLabel.FindAllStringSubmatch(q.legend, -1) {
			if !slices.ContainsFunc(res, func(s sample) bool { return s.Metric[m[1]] != "" }) {
				problems = append(problems, fmt.Sprintf("%s: legend %q: no series has label %s: %v", q.where, q.legend, m[1], res[0].Metric))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d of %d dashboard queries:\n\t%s", len(problems), len(queries), strings.Join(problems, "\n\t"))
	}
	return nil
}

// checkRules reports rules that did not evaluate or failed, and alerts
// firing (this cluster is healthy).
func checkRules(ctx context.Context, prom *prometheus) error {
	rules, err := prom.rules(ctx)
	if err != nil {
		return err
	}
	if len(rules) == 0 {
		return errors.New("no rules loaded")
	}
	var problems []string
	for _, r := range rules {
		switch {
		case r.Health != "ok":
			problems = append(problems, fmt.Sprintf("%s: health %q %s", r.Name, r.Health, r.LastError))
		case r.State == "firing":
			problems = append(problems, r.Name+" fires on a healthy cluster")
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n\t"))
	}
	return nil
}

// checkMetrics runs `promtool check metrics` on member m's /metrics (from
// --metrics-addr) and requires it to say nothing.
func checkMetrics(t *testing.T, m member) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+m.metricsAddr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s /metrics: %s %v", m.ID, resp.Status, err)
	}
	cmd := exec.CommandContext(t.Context(), lookPath(t, "promtool"), "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("%s: promtool check metrics: %v\n%s", m.ID, err, out)
	}
}

// writeFile writes content to a file name in a temporary directory and
// returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
