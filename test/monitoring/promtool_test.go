package monitoring

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// lookPath returns the path of the Prometheus tool name. When it is not
// installed the test is skipped, or fails under CI=true (.ci/run installs
// Debian's prometheus package: a missing tool there is a broken run).
func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not installed (apt-get install prometheus), and CI=true: %v", name, err)
		}
		t.Skipf("%s not installed (apt-get install prometheus): %v", name, err)
	}
	return p
}

// promtool runs promtool with args and returns its combined output; a
// non-zero exit fails the test.
func promtool(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), lookPath(t, "promtool"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestRulesPromtool(t *testing.T) {
	t.Run("check", func(t *testing.T) { t.Log(promtool(t, "check", "rules", rulesPath)) })
	t.Run("test", func(t *testing.T) { t.Log(promtool(t, "test", "rules", rulesTestPath)) })
}

// grafanaVar is a Grafana variable in a query: $name, ${name} or
// ${name:format}.
var grafanaVar = regexp.MustCompile(`\$(\{[^}]*\}|[a-zA-Z_][a-zA-Z0-9_]*)`)

// expandGrafana replaces Grafana's variables in a panel query: interval
// variables by interval, any other (job, member) by the regex value.
func expandGrafana(expr, interval, value string) string {
	return grafanaVar.ReplaceAllStringFunc(expr, func(v string) string {
		name := strings.Trim(v, "${}")
		name, _, _ = strings.Cut(name, ":")
		switch name {
		case "__rate_interval", "__interval", "__range":
			return interval
		}
		return value
	})
}

// TestDashboardQueriesParse hands every dashboard query, its variables
// expanded, to `promtool check rules` as a recording rule: promtool parses
// it with Prometheus's own parser.
func TestDashboardQueriesParse(t *testing.T) {
	lookPath(t, "promtool")
	type recording struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	var rules []recording
	queries := dashboardQueries(t, loadDashboard(t))
	for i, q := range queries {
		rules = append(rules, recording{Record: fmt.Sprintf("dashboard:query_%d", i), Expr: expandGrafana(q.expr, "1m", ".*")})
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard.rules.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := promtool(t, "check", "rules", path)
	if want := fmt.Sprintf("SUCCESS: %d rules found", len(rules)); !strings.Contains(out, want) {
		t.Errorf("promtool check rules: want %q:\n%s", want, out)
	}
}
