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

	"sigs.k8s.io/yaml"
)

// checkPrometheus runs Debian's Prometheus on the host. Debian builds it
// without Kubernetes discovery (kubernetes_sd_configs is not there), so it
// finds the members as any Prometheus outside the cluster can: DNS
// discovery of the headless Service's SRV records for the metrics port
// (_metrics._tcp.<peers Service>), through the cluster DNS — Prometheus
// runs in a mount namespace of its own whose /etc/resolv.conf names
// CoreDNS's ClusterIP. up{job="litek8s"} must have one series per member,
// each 1, and the dashboard's Raft series must be there.
func checkPrometheus(t *testing.T, h *host, ns string, n int) {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("prometheus: %v (apt-get install prometheus)", err)
		}
		t.Logf("prometheus not installed: not checked (%v)", err)
		return
	}
	dnsIP := h.mustKubectl("-n", "kube-system", "get", "svc", "kube-dns", "-o", "jsonpath={.spec.clusterIP}")
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver "+dnsIP+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fmt.Sprintf("_metrics._tcp.%s-litek8s-peers.%s.svc.cluster.local", release, ns)
	cfg, err := yaml.Marshal(map[string]any{
		"global": map[string]any{"scrape_interval": "2s", "scrape_timeout": "2s"},
		"scrape_configs": []any{map[string]any{
			"job_name":        "litek8s",
			"dns_sd_configs":  []any{map[string]any{"names": []string{srv}, "type": "SRV", "refresh_interval": "5s"}},
			"relabel_configs": []any{map[string]any{"source_labels": []string{"__meta_dns_srv_record_target"}, "target_label": "member", "regex": `([^.]+)\..*`}},
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
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c",
		`mount --bind "$0" /etc/resolv.conf && exec "$@"`, resolv,
		bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
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
	t.Logf(`Prometheus (dns_sd_configs SRV %s): up{job="litek8s"} has %d series, all 1: %v`, srv, len(up), up)
}
