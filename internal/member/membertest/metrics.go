package membertest

import (
	"bytes"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
)

// Metrics is one scrape of a member's GET /metrics: sample values by
// series (name and sorted labels) and the raw text.
type Metrics struct {
	m   map[string]float64
	Raw []byte
}

// Scrape reads member i's GET /metrics with the admin token.
func (c *Cluster) Scrape(t testing.TB, i int) Metrics {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.RESTConfig(i))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	s, err := ParseMetrics(raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ParseMetrics reads the Prometheus text format (what our label values
// need: no escapes).
func ParseMetrics(raw []byte) (Metrics, error) {
	s := Metrics{m: map[string]float64{}, Raw: raw}
	for _, line := range strings.Split(string(raw), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, labels := line, "", []string(nil)
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		if strings.HasPrefix(rest, "{") {
			end := strings.Index(rest, "}")
			if end < 0 {
				return s, fmt.Errorf("metrics: bad line %q", line)
			}
			for _, kv := range strings.Split(rest[1:end], ",") {
				if kv == "" {
					continue
				}
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return s, fmt.Errorf("metrics: bad labels in %q", line)
				}
				labels = append(labels, k, strings.Trim(v, `"`))
			}
			rest = rest[end+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return s, fmt.Errorf("metrics: no value in %q", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return s, fmt.Errorf("metrics: value in %q: %w", line, err)
		}
		s.m[SeriesKey(name, labels...)] = v
	}
	return s, nil
}

// SeriesKey names a series: name{k="v",...} with the labels sorted;
// labels are name, value pairs.
func SeriesKey(name string, labels ...string) string {
	var kvs []string
	for i := 0; i+1 < len(labels); i += 2 {
		kvs = append(kvs, labels[i]+"="+strconv.Quote(labels[i+1]))
	}
	sort.Strings(kvs)
	return name + "{" + strings.Join(kvs, ",") + "}"
}

// Value is the series' value, 0 when absent (a counter not yet counted).
func (s Metrics) Value(name string, labels ...string) float64 { return s.m[SeriesKey(name, labels...)] }

// Has reports whether the scrape has the series.
func (s Metrics) Has(name string, labels ...string) bool {
	_, ok := s.m[SeriesKey(name, labels...)]
	return ok
}

// Want checks the series is present with value v.
func (s Metrics) Want(name string, v float64, labels ...string) error {
	got, ok := s.m[SeriesKey(name, labels...)]
	if !ok || got != v {
		return fmt.Errorf("%s = %v (present: %v), want %v", SeriesKey(name, labels...), got, ok, v)
	}
	return nil
}

// PromtoolCheck lints the metric families with the given prefixes with
// `promtool check metrics` (skipped when promtool is not installed).
func PromtoolCheck(t testing.TB, raw []byte, prefixes ...string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed: metrics not linted")
		return
	}
	var ours bytes.Buffer
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		name := strings.TrimPrefix(strings.TrimPrefix(line, "# HELP "), "# TYPE ")
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				ours.WriteString(line)
				break
			}
		}
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = &ours
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
