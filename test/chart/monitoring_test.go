package chart

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The PrometheusRule and the dashboard ConfigMap come from files another
// part of the chart owns (rules/litek8s.rules.yaml, dashboards/*.json).
// Without them the chart renders neither, even when enabled; with them it
// carries them over unchanged. Both cases run on copies of the chart: one
// without those directories, one with the fixtures of
// testdata/monitoring.
func TestMonitoringFiles(t *testing.T) {
	h := newHelm(t)
	enable := []string{"--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.prometheusRule.enabled=true",
		"--set", "metrics.grafanaDashboard.enabled=true"}

	t.Run("absent", func(t *testing.T) {
		chart := copyChart(t, chartDir(t), "")
		h.must(append([]string{"lint", "--strict", chart}, enable...)...)
		ms := h.template(chart, enable...)
		if ms.has("PrometheusRule", "lk-litek8s") || ms.has("ConfigMap", "lk-litek8s-dashboards") {
			t.Errorf("rendered without the files: %v", ms.ids())
		}
		if !ms.has("ServiceMonitor", "lk-litek8s") {
			t.Errorf("no ServiceMonitor: %v", ms.ids())
		}
	})

	t.Run("fixtures", func(t *testing.T) {
		chart := copyChart(t, chartDir(t), "testdata/monitoring")
		h.must(append([]string{"lint", "--strict", chart}, enable...)...)
		ms := h.template(chart, enable...)
		checkMonitoringFiles(t, ms, chart, []string{"one.json", "two.json"})
		if off := h.template(chart); off.has("PrometheusRule", "lk-litek8s") || off.has("ConfigMap", "lk-litek8s-dashboards") ||
			off.has("ServiceMonitor", "lk-litek8s") {
			t.Errorf("rendered while disabled: %v", off.ids())
		}
		// helm package leaves the rules' unit tests out (.helmignore).
		files := packagedFiles(t, h, chart)
		if !slices.Contains(files, "litek8s/rules/litek8s.rules.yaml") || slices.Contains(files, "litek8s/rules/litek8s.rules.test.yaml") {
			t.Errorf("packaged chart holds %v", files)
		}
	})

	t.Run("chart as it is", func(t *testing.T) {
		chart := chartDir(t)
		ms := h.template(chart, enable...)
		dashboards, _ := filepath.Glob(filepath.Join(chart, "dashboards", "*.json"))
		var names []string
		for _, d := range dashboards {
			names = append(names, filepath.Base(d))
		}
		if _, err := os.Stat(filepath.Join(chart, "rules", "litek8s.rules.yaml")); err != nil {
			t.Logf("no rules file yet (%v)", err)
		}
		checkMonitoringFiles(t, ms, chart, names)
	})
}

// checkMonitoringFiles checks that the PrometheusRule holds the groups of
// chart's rules file and the dashboard ConfigMap the dashboards named,
// byte for byte; an absent rules file or no dashboard means no object.
func checkMonitoringFiles(t *testing.T, ms manifests, chart string, dashboards []string) {
	t.Helper()
	rules, err := os.ReadFile(filepath.Join(chart, "rules", "litek8s.rules.yaml"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if ms.has("PrometheusRule", "lk-litek8s") {
			t.Error("a PrometheusRule without a rules file")
		}
	case err != nil:
		t.Fatal(err)
	default:
		var file struct{ Groups []any }
		if err := yaml.Unmarshal(rules, &file); err != nil {
			t.Fatal(err)
		}
		spec := ms.get(t, "PrometheusRule", "lk-litek8s").u.Object["spec"].(map[string]any)
		if len(spec) != 1 || !reflect.DeepEqual(spec["groups"], file.Groups) {
			t.Errorf("PrometheusRule spec differs from the rules file's groups:\n%v\nwant groups:\n%v", spec, file.Groups)
		}
	}
	if len(dashboards) == 0 {
		if ms.has("ConfigMap", "lk-litek8s-dashboards") {
			t.Error("a dashboard ConfigMap without dashboards")
		}
		return
	}
	cm := ms.configMap(t, "lk-litek8s-dashboards")
	if cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("labels %v, want grafana_dashboard: \"1\"", cm.Labels)
	}
	var keys []string
	for k := range cm.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, dashboards) {
		t.Errorf("dashboards %v, want %v", keys, dashboards)
	}
	for _, name := range dashboards {
		want, err := os.ReadFile(filepath.Join(chart, "dashboards", name))
		if err != nil {
			t.Fatal(err)
		}
		// A `|-` block: the file less its final newline.
		if got := cm.Data[name]; got != strings.TrimRight(string(want), "\n") {
			t.Errorf("dashboard %s differs from the file (%d bytes, file %d)", name, len(got), len(want))
		}
	}
}

// copyChart copies the chart into a temporary directory, without its
// dashboards/ and rules/, and then with those of fixtures (a directory
// holding dashboards/ and rules/; "" for none).
func copyChart(t *testing.T, src, fixtures string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "litek8s")
	skip := func(rel string) bool {
		return rel == "dashboards" || rel == "rules" ||
			strings.HasPrefix(rel, "dashboards"+string(filepath.Separator)) || strings.HasPrefix(rel, "rules"+string(filepath.Separator))
	}
	if err := copyTree(src, dst, skip); err != nil {
		t.Fatal(err)
	}
	if fixtures != "" {
		if err := copyTree(fixtures, dst, func(string) bool { return false }); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func copyTree(src, dst string, skip func(rel string) bool) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if rel != "." && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

// packagedFiles runs `helm package` and lists the archive's files.
func packagedFiles(t *testing.T, h *helmCLI, chart string) []string {
	t.Helper()
	out := t.TempDir()
	h.must("package", chart, "--destination", out)
	tgz, err := filepath.Glob(filepath.Join(out, "*.tgz"))
	if err != nil || len(tgz) != 1 {
		t.Fatalf("helm package wrote %v (%v)", tgz, err)
	}
	f, err := os.Open(tgz[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var files []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, hdr.Name)
	}
	slices.Sort(files)
	return files
}
