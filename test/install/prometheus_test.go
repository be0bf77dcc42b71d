package install

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/litek8s/litek8s/test/realcluster"
)

// checkPrometheus runs Debian's Prometheus on the host with a scrape job
// that discovers Pods through the host Kubernetes API and keeps those the
// chart annotates prometheus.io/scrape, as Prometheus' own example config
// for Kubernetes does; up{job="litek8s"} must have one series per member,
// each 1, and the dashboard's Raft series must be there.
func checkPrometheus(t *testing.T, c *realcluster.Cluster, ns string, n int) {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("prometheus: %v (apt-get install prometheus)", err)
		}
		t.Logf("prometheus not installed: not checked (%v)", err)
		return
	}
	rc, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]byte{"ca.crt": rc.CAData, "client.crt": rc.CertData, "client.key": rc.KeyData}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tlsCfg := map[string]any{"ca_file": filepath.Join(dir, "ca.crt")}
	if len(rc.CertData) > 0 {
		tlsCfg["cert_file"], tlsCfg["key_file"] = filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	}
	sd := map[string]any{"role": "pod", "api_server": rc.Host, "tls_config": tlsCfg,
		"namespaces": map[string]any{"names": []string{ns}}}
	if rc.BearerToken != "" {
		sd["authorization"] = map[string]any{"credentials": rc.BearerToken}
	}
	cfg, err := yaml.Marshal(map[string]any{
		"global": map[string]any{"scrape_interval": "2s", "scrape_timeout": "2s"},
		"scrape_configs": []any{map[string]any{
			"job_name":              "litek8s",
			"kubernetes_sd_configs": []any{sd},
			"relabel_configs": []any{
				map[string]any{"source_labels": []string{"__meta_kubernetes_pod_annotation_prometheus_io_scrape"},
					"action": "keep", "regex": "true"},
				map[string]any{"source_labels": []string{"__meta_kubernetes_pod_annotation_prometheus_io_path"},
					"target_label": "__metrics_path__", "regex": "(.+)"},
				map[string]any{"source_labels": []string{"__address__", "__meta_kubernetes_pod_annotation_prometheus_io_port"},
					"regex": `([^:]+)(?::\d+)?;(\d+)`, "replacement": "$1:$2", "target_label": "__address__"},
				map[string]any{"source_labels": []string{"__meta_kubernetes_pod_name"}, "target_label": "pod"},
			},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Logf("prometheus log:\n%s\nconfig:\n%s", b, cfg)
		}
	}()
	hc := &http.Client{Timeout: 5 * time.Second}
	query := func(q string) ([]map[string]any, error) {
		resp, err := hc.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var r struct {
			Status string
			Data   struct{ Result []map[string]any }
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return nil, err
		}
		if r.Status != "success" {
			return nil, fmt.Errorf("query %s: %s", q, r.Status)
		}
		return r.Data.Result, nil
	}
	eventually(t, 90*time.Second, func() error {
		up, err := query(`up{job="litek8s"} == 1`)
		if err != nil {
			return err
		}
		if len(up) != n {
			return fmt.Errorf(`up{job="litek8s"} == 1: %d series, want %d: %v`, len(up), n, up)
		}
		for _, q := range []string{`litek8s_raft_state{job="litek8s"}`, `litek8s_raft_term{job="litek8s"}`,
			`litek8s_raft_ready{job="litek8s"}`} {
			r, err := query(q)
			if err != nil {
				return err
			}
			if len(r) < n {
				return fmt.Errorf("%s: %d series, want %d", q, len(r), n)
			}
		}
		return nil
	})
	up, _ := query(`up{job="litek8s"}`)
	t.Logf(`Prometheus (kubernetes_sd_configs role pod, prometheus.io annotations): up{job="litek8s"} has %d series, all 1: %v`, len(up), up)
}
