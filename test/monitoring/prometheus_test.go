package monitoring

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// freeAddr returns 127.0.0.1:PORT with a port that was free a moment ago
// (for processes that do not report the port they picked).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// eventually calls f every interval until it returns nil, failing the
// test with f's last error after d.
func eventually(t *testing.T, d, interval time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not true after %v: %v", d, err)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("%v (last: %v)", t.Context().Err(), err)
		case <-tick.C:
		}
	}
}

// scrapeJob is one job of Prometheus's scrape configuration.
type scrapeJob struct {
	Name    string   // job_name
	Targets []string // host:port
	// HTTPS with the admin token: the member's API, not --metrics-addr.
	TokenFile, CAFile string
}

// prometheus is a prometheus process and a client of its HTTP API.
type prometheus struct {
	URL  string
	http *http.Client
}

// startPrometheus starts a Prometheus that scrapes jobs every second and
// evaluates ruleFiles every second, with its storage in a temporary
// directory, and waits until it is ready. It is stopped on t.Cleanup.
func startPrometheus(t *testing.T, jobs []scrapeJob, ruleFiles ...string) *prometheus {
	t.Helper()
	bin := lookPath(t, "prometheus")
	dir := t.TempDir()
	var scrapes []map[string]any
	for _, j := range jobs {
		sc := map[string]any{"job_name": j.Name, "static_configs": []any{map[string]any{"targets": j.Targets}}}
		if j.TokenFile != "" {
			sc["scheme"] = "https"
			sc["authorization"] = map[string]any{"credentials_file": j.TokenFile}
			sc["tls_config"] = map[string]any{"ca_file": j.CAFile}
		}
		scrapes = append(scrapes, sc)
	}
	var rules []string
	for _, f := range ruleFiles {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, abs)
	}
	cfg, err := yaml.Marshal(map[string]any{
		"global":         map[string]any{"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
		"rule_files":     rules,
		"scrape_configs": scrapes,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	logPath := filepath.Join(dir, "prometheus.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logFile.Close(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("prometheus did not stop on SIGTERM")
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("prometheus log (last 3000 bytes):\n%s\nconfig:\n%s", tail(b, 3000), cfg)
		}
	})
	p := &prometheus{URL: "http://" + addr, http: &http.Client{Timeout: 10 * time.Second}}
	eventually(t, 30*time.Second, 100*time.Millisecond, func() error {
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("prometheus exited:\n%s", tail(b, 3000))
		default:
		}
		resp, err := p.http.Get(p.URL + "/-/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/-/ready: %s", resp.Status)
		}
		return nil
	})
	return p
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// api GETs an /api/v1 path and decodes the data of a successful answer
// into out.
func (p *prometheus) api(ctx context.Context, path string, params url.Values, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/api/v1/"+path+"?"+params.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return fmt.Errorf("%s %v: %s: %w", path, params, tail(b, 300), err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s %v: %s: %s", path, params, body.Status, body.Error)
	}
	return json.Unmarshal(body.Data, out)
}

// sample is one series of an instant query's vector.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"` // time, "value"
}

// query runs an instant query that must return a vector.
func (p *prometheus) query(ctx context.Context, expr string) ([]sample, error) {
	var data struct {
		ResultType string   `json:"resultType"`
		Result     []sample `json:"result"`
	}
	if err := p.api(ctx, "query", url.Values{"query": {expr}}, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("query %q: a %s, not a vector", expr, data.ResultType)
	}
	return data.Result, nil
}

// series returns the label sets of the series matching match since start.
func (p *prometheus) series(ctx context.Context, match string, start time.Time) ([]map[string]string, error) {
	var out []map[string]string
	err := p.api(ctx, "series", url.Values{"match[]": {match},
		"start": {fmt.Sprint(start.Unix())}, "end": {fmt.Sprint(time.Now().Unix() + 1)}}, &out)
	return out, err
}

// scrapeTarget is one entry of /api/v1/targets.
type scrapeTarget struct {
	ScrapePool string            `json:"scrapePool"`
	ScrapeURL  string            `json:"scrapeUrl"`
	Labels     map[string]string `json:"labels"`
	Health     string            `json:"health"`
	LastError  string            `json:"lastError"`
}

func (p *prometheus) targets(ctx context.Context) ([]scrapeTarget, error) {
	var data struct {
		ActiveTargets []scrapeTarget `json:"activeTargets"`
	}
	err := p.api(ctx, "targets", url.Values{"state": {"active"}}, &data)
	return data.ActiveTargets, err
}

// ruleState is one rule of /api/v1/rules.
type ruleState struct {
	Name      string `json:"name"`
	Type      string `json:"type"` // alerting, recording
	Health    string `json:"health"`
	LastError string `json:"lastError"`
	State     string `json:"state"` // alerting rules: inactive, pending, firing
}

// rules returns every loaded rule with its health.
func (p *prometheus) rules(ctx context.Context) ([]ruleState, error) {
	var data struct {
		Groups []struct {
			Rules []ruleState `json:"rules"`
		} `json:"groups"`
	}
	if err := p.api(ctx, "rules", nil, &data); err != nil {
		return nil, err
	}
	var out []ruleState
	for _, g := range data.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}
