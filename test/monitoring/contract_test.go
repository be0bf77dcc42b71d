package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Paths of what is tested, from this package's directory.
var (
	root          = filepath.Join("..", "..")
	dashboardPath = filepath.Join(root, "charts", "litek8s", "dashboards", "litek8s.json")
	rulesPath     = filepath.Join(root, "charts", "litek8s", "rules", "litek8s.rules.yaml")
	rulesTestPath = filepath.Join(root, "charts", "litek8s", "rules", "litek8s.rules.test.yaml")
	contractPath  = filepath.Join(root, "docs", "metrics.md")
	readmePath    = filepath.Join(root, "README.md")
)

// runbookBase is where every alert's runbook_url points: the README's
// "Alerts" table, at the anchor of the alert's name in lower case.
const runbookBase = "https://github.com/litek8s/litek8s/blob/main/README.md#"

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int        `json:"id"`
	Type       string     `json:"type"`
	Title      string     `json:"title"`
	Datasource datasource `json:"datasource"`
	GridPos    struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []target `json:"targets"`
	Panels  []panel  `json:"panels"` // a collapsed row's
}

type target struct {
	Datasource   datasource `json:"datasource"`
	Expr         string     `json:"expr"`
	LegendFormat string     `json:"legendFormat"`
	RefID        string     `json:"refId"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"` // a string, or {"query": "..."}
	Datasource *datasource     `json:"datasource"`
	Multi      bool            `json:"multi"`
	IncludeAll bool            `json:"includeAll"`
}

// queryString is the variable's query, whichever form it has.
func (v variable) queryString() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	json.Unmarshal(v.Query, &o)
	return o.Query
}

// ruleFile is a Prometheus rule file.
type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []rule `json:"rules"`
	} `json:"groups"`
}

type rule struct {
	Alert       string            `json:"alert"`
	Record      string            `json:"record"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// ruleTests is promtool's unit-test file (the part read here).
type ruleTests struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		AlertRuleTest []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []struct {
				ExpLabels map[string]string `json:"exp_labels"`
			} `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	return d
}

// panels returns every panel, those of collapsed rows included.
func (d dashboard) panels() []panel {
	var out []panel
	for _, p := range d.Panels {
		out = append(out, p)
		out = append(out, p.Panels...)
	}
	return out
}

// loadYAML decodes path into out; strict: fields out does not know are
// errors.
func loadYAML(t *testing.T, path string, out any, strict bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	unmarshal := yaml.Unmarshal
	if strict {
		unmarshal = yaml.UnmarshalStrict
	}
	if err := unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func loadRules(t *testing.T) []rule {
	t.Helper()
	var f ruleFile
	loadYAML(t, rulesPath, &f, true)
	var out []rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// query is one PromQL expression and where it comes from.
type query struct {
	where, expr string
	legend      string // the dashboard target's legendFormat
}

// dashboardQueries returns every panel target's and every query variable's
// expression. label_values(METRIC, LABEL) and query_result(EXPR) give
// their PromQL part.
func dashboardQueries(t *testing.T, d dashboard) []query {
	t.Helper()
	var out []query
	for _, p := range d.panels() {
		for _, tg := range p.Targets {
			out = append(out, query{where: fmt.Sprintf("panel %q (%s)", p.Title, tg.RefID), expr: tg.Expr, legend: tg.LegendFormat})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q := strings.TrimSpace(v.queryString())
		switch {
		case strings.HasPrefix(q, "label_values(") && strings.HasSuffix(q, ")"):
			args := q[len("label_values(") : len(q)-1]
			i := strings.LastIndexByte(args, ',')
			if i < 0 {
				continue // label_values(label): no series
			}
			q = args[:i]
		case strings.HasPrefix(q, "query_result(") && strings.HasSuffix(q, ")"):
			q = q[len("query_result(") : len(q)-1]
		default:
			t.Errorf("variable %s: query %q is neither label_values nor query_result", v.Name, q)
			continue
		}
		out = append(out, query{where: "variable " + v.Name, expr: q})
	}
	return out
}

func ruleQueries(rules []rule) []query {
	var out []query
	for _, r := range rules {
		out = append(out, query{where: "rule " + r.Alert + r.Record, expr: r.Expr})
	}
	return out
}

// contract is docs/metrics.md: the documented series with their types, and
// the documented families (`raft_*`, `go_*`).
type contract struct {
	types    map[string]string // name → counter, gauge, histogram, various
	prefixes []string
}

var (
	backticked = regexp.MustCompile("`([a-zA-Z_:][a-zA-Z0-9_:]*\\*?)`")
	familyRe   = regexp.MustCompile("`([a-z][a-z0-9_]*_)\\*`")
)

// loadContract reads the series from the first column of the tables, and
// the families from the tables and from the section on Go and the process
// (the note on raft_* in tests names families too, but lists nothing).
func loadContract(t *testing.T) contract {
	t.Helper()
	b, err := os.ReadFile(contractPath)
	if err != nil {
		t.Fatal(err)
	}
	c := contract{types: map[string]string{}}
	family := func(text string) {
		for _, m := range familyRe.FindAllStringSubmatch(text, -1) {
			if !slices.Contains(c.prefixes, m[1]) {
				c.prefixes = append(c.prefixes, m[1])
			}
		}
	}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = h
			continue
		}
		if section == "Go and the process" {
			family(line)
		}
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.TrimSpace(cells[1]) == "series" {
			continue
		}
		typ := strings.TrimSpace(cells[2])
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			if !strings.HasSuffix(m[1], "*") {
				c.types[m[1]] = typ
			}
		}
		family(cells[1])
	}
	if len(c.types) < 40 || !slices.Contains(c.prefixes, "go_") || !slices.Contains(c.prefixes, "process_") {
		t.Fatalf("%s: read %d series and families %q: the table format changed?", contractPath, len(c.types), c.prefixes)
	}
	return c
}

// documented reports whether series name is in the contract: a listed
// name, a histogram's _bucket, _sum or _count, or a listed family.
func (c contract) documented(name string) bool {
	if _, ok := c.types[name]; ok {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && c.types[base] == "histogram" {
			return true
		}
	}
	for _, p := range c.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// usedSeries returns every series name the dashboard and the rules use,
// with where each is used; recording rules of the rules file are left out.
func usedSeries(t *testing.T) map[string][]string {
	t.Helper()
	rules := loadRules(t)
	records := map[string]bool{}
	for _, r := range rules {
		if r.Record != "" {
			records[r.Record] = true
		}
	}
	used := map[string][]string{}
	for _, q := range append(dashboardQueries(t, loadDashboard(t)), ruleQueries(rules)...) {
		names, err := seriesNames(q.expr)
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
			continue
		}
		if len(names) == 0 {
			t.Errorf("%s: %q names no series", q.where, q.expr)
		}
		for _, n := range names {
			if !records[n] {
				used[n] = append(used[n], q.where)
			}
		}
	}
	return used
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestSeriesInContract: every series the dashboard and the rules use is
// one docs/metrics.md lists.
func TestSeriesInContract(t *testing.T) {
	c := loadContract(t)
	used := usedSeries(t)
	for _, name := range sortedKeys(used) {
		if !c.documented(name) {
			t.Errorf("%s is not in %s; used by %s", name, contractPath, strings.Join(used[name], ", "))
		}
	}
	// What the issue asks the dashboard and the alerts to show.
	for _, name := range []string{
		"apiserver_request_total", "apiserver_request_duration_seconds_bucket", "litek8s_raft_state",
		"litek8s_raft_term", "litek8s_raft_has_leader", "litek8s_raft_leader_changes_total",
		"litek8s_raft_member_lag_entries", "litek8s_raft_member_lag_seconds",
		"litek8s_raft_apply_duration_seconds_bucket", "litek8s_raft_propose_duration_seconds_bucket",
		"apiserver_storage_objects", "litek8s_store_watchers", "workqueue_depth",
		"process_resident_memory_bytes", "go_memstats_heap_inuse_bytes",
		"litek8s_raft_snapshot_failures_total", "litek8s_raft_ready",
		"litek8s_certificate_expiry_timestamp_seconds", "litek8s_api_refused_requests_total", "litek8s_raft_log_bytes",
	} {
		if _, ok := used[name]; !ok {
			t.Errorf("neither the dashboard nor the rules use %s", name)
		}
	}
	t.Logf("%d series used; the contract lists %d and the families %q", len(used), len(c.types), c.prefixes)
}

// TestDashboard checks the dashboard's shape: a Prometheus datasource
// variable used by every panel and target, a job and a member variable,
// unique panel IDs, panels within the 24-column grid without overlaps,
// and the rows the issue lists.
func TestDashboard(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("uid %q, title %q: both are needed for provisioning", d.UID, d.Title)
	}
	vars := map[string]variable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if v := vars["datasource"]; v.Type != "datasource" || v.queryString() != "prometheus" {
		t.Errorf("variable datasource = %+v, want a prometheus datasource variable", v)
	}
	for _, name := range []string{"job", "member"} {
		v, ok := vars[name]
		if !ok || v.Type != "query" || v.Datasource == nil || v.Datasource.UID != "${datasource}" {
			t.Errorf("variable %s = %+v, want a query variable on ${datasource}", name, v)
		}
	}
	if v := vars["member"]; !v.Multi || !v.IncludeAll {
		t.Errorf("variable member: multi %v, includeAll %v; want both", v.Multi, v.IncludeAll)
	}
	ids := map[int]string{}
	type cell struct{ x, y int }
	taken := map[cell]string{}
	var rows []string
	for _, p := range d.panels() {
		if prev, ok := ids[p.ID]; ok || p.ID == 0 {
			t.Errorf("panel %q: id %d (also %q)", p.Title, p.ID, prev)
		}
		ids[p.ID] = p.Title
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, g)
		}
	grid:
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := taken[cell{x, y}]; ok {
					t.Errorf("panel %q overlaps %q at (%d,%d)", p.Title, other, x, y)
					break grid
				}
				taken[cell{x, y}] = p.Title
			}
		}
		if p.Type == "row" {
			rows = append(rows, p.Title)
			continue
		}
		if p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: datasource %+v, want ${datasource}", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Datasource.UID != "${datasource}" || strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q, target %s: datasource %+v, expr %q", p.Title, tg.RefID, tg.Datasource, tg.Expr)
			}
		}
	}
	for _, want := range []string{"leader", "request", "latency", "replication", "storage", "watch", "controller", "memory"} {
		found := false
		for _, r := range rows {
			found = found || strings.Contains(strings.ToLower(r), want)
		}
		if !found {
			t.Errorf("no row about %q among %q", want, rows)
		}
	}
}

// alertsSection returns the README's "### Alerts" section.
func alertsSection(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n### Alerts\n")
	if !ok {
		t.Fatalf("%s has no \"### Alerts\" section", readmePath)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	return section
}

// TestAlerts: every alert says how bad it is and what to do, links its
// runbook (an anchor of the README's Alerts table), and
// litek8s.rules.test.yaml has a case in which it fires and one in which
// it does not: an alert added without tests fails here.
func TestAlerts(t *testing.T) {
	var tests ruleTests
	loadYAML(t, rulesTestPath, &tests, false)
	fires, quiet := map[string]bool{}, map[string]bool{}
	clusterDownWithoutJob := false
	for _, tc := range tests.Tests {
		for _, at := range tc.AlertRuleTest {
			if len(at.ExpAlerts) == 0 {
				quiet[at.Alertname] = true
			}
			for _, a := range at.ExpAlerts {
				fires[at.Alertname] = true
				if _, ok := a.ExpLabels["job"]; at.Alertname == "Litek8sClusterDown" && !ok {
					clusterDownWithoutJob = true
				}
			}
		}
	}
	if !clusterDownWithoutJob {
		t.Errorf("%s: no case in which Litek8sClusterDown fires through absent() (all members down: no job label)", rulesTestPath)
	}
	readme := alertsSection(t)
	alerts := map[string]bool{}
	for _, r := range loadRules(t) {
		if r.Alert == "" {
			continue
		}
		alerts[r.Alert] = true
		if s := r.Labels["severity"]; s != "critical" && s != "warning" && s != "info" {
			t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, s)
		}
		if r.For == "" {
			t.Errorf("%s: no for: (say 0m when it must fire at once)", r.Alert)
		}
		if r.Annotations["summary"] == "" || len(r.Annotations["description"]) < 100 {
			t.Errorf("%s: a summary and a description that says what to do are needed: %q", r.Alert, r.Annotations)
		}
		if !fires[r.Alert] {
			t.Errorf("%s: no promtool test in %s in which it fires", r.Alert, rulesTestPath)
		}
		if !quiet[r.Alert] {
			t.Errorf("%s: no promtool test in %s in which it does not fire (exp_alerts: [])", r.Alert, rulesTestPath)
		}
		anchor := strings.ToLower(r.Alert)
		if got := r.Annotations["runbook_url"]; got != runbookBase+anchor {
			t.Errorf("%s: runbook_url %q, want %q", r.Alert, got, runbookBase+anchor)
		}
		if !strings.Contains(readme, `<a id="`+anchor+`"></a>`) || !strings.Contains(readme, "`"+r.Alert+"`") {
			t.Errorf("%s: the README's Alerts table has no row with <a id=%q></a>", r.Alert, anchor)
		}
	}
	for _, want := range []string{"Litek8sNoLeader", "Litek8sLeaderChangesTooOften", "Litek8sMemberLaggingEntries",
		"Litek8sMemberLaggingSeconds", "Litek8sApplyLatencyHigh", "Litek8sCommitLatencyHigh", "Litek8sSnapshotFailing",
		"Litek8sMemberNotReady", "Litek8sMemberDown",
		"Litek8sCertificateExpiringSoon", "Litek8sClusterDown", "Litek8sMemberUnreachable", "Litek8sAPIErrorsHigh",
		"Litek8sAPILatencyHigh", "Litek8sRequestsRefused", "Litek8sDatabaseGrowing"} {
		if !alerts[want] {
			t.Errorf("alert %s is missing", want)
		}
	}
}
