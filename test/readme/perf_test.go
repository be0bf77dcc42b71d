package readme

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// baseline is the part of bench/perf-baseline.json (api_load -json) the
// README quotes.
type baseline struct {
	Scenarios []struct {
		Name string  `json:"name"`
		Ops  float64 `json:"ops_per_sec"`
		P50  float64 `json:"p50_ms"`
		P90  float64 `json:"p90_ms"`
		P99  float64 `json:"p99_ms"`
	} `json:"scenarios"`
	Targets []struct {
		ID    int     `json:"id"`
		Name  string  `json:"name"`
		Value float64 `json:"value"`
	} `json:"targets"`
}

// section returns README's text from the heading line to the next heading
// of the same or a higher level.
func section(readme, heading string) string {
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		return ""
	}
	rest := readme[i+1+len(heading):]
	level := strings.Count(strings.Fields(heading)[0], "#")
	for _, l := range strings.SplitAfter(rest, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && strings.Trim(f[0], "#") == "" && len(f[0]) <= level {
			return rest[:strings.Index(rest, l)]
		}
	}
	return rest
}

// tableRows returns the cells of the Markdown table rows in text (header
// and separator excluded).
func tableRows(text string) [][]string {
	var rows [][]string
	header := true
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "|") {
			header = true
			continue
		}
		if header || strings.HasPrefix(l, "|---") {
			header = false
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(l, "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	return rows
}

var numberRe = regexp.MustCompile(`^[0-9][0-9,]*(\.[0-9]+)?`)

// quotes reports whether cell starts with a number that is v rounded to
// the number of decimals the cell shows.
func quotes(cell string, v float64) error {
	s := numberRe.FindString(cell)
	if s == "" {
		return fmt.Errorf("%q is not a number", cell)
	}
	decimals := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		decimals = len(s) - i - 1
	}
	got, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil {
		return err
	}
	if math.Abs(got-v) > 0.5*math.Pow(10, -float64(decimals))+1e-9 {
		return fmt.Errorf("%s, but bench/perf-baseline.json says %v", s, v)
	}
	return nil
}

// README's Performance figures are bench/perf-baseline.json's: each
// scenario row's ops/s, p50, p90 and p99, and the measured ratio or
// latency of each target the baseline computes (targets 1-5 and 7; the
// others name the command that measured them).
func TestPerformanceFiguresAreTheBaseline(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "bench", "perf-baseline.json"))
	if err != nil {
		t.Fatal(err)
	}
	var base baseline
	if err := json.Unmarshal(raw, &base); err != nil {
		t.Fatal(err)
	}
	perf := section(string(readme), "## Performance")
	targets := section(perf, "### Targets (issue 4)")
	if perf == "" || targets == "" {
		t.Fatal(`README.md lacks "## Performance" or its "### Targets (issue 4)"`)
	}
	scenarios := tableRows(perf[:strings.Index(perf, "### Targets (issue 4)")])
	if len(scenarios) != len(base.Scenarios) {
		t.Errorf("README's scenario table has %d rows, the baseline %d scenarios", len(scenarios), len(base.Scenarios))
	}
	for _, row := range scenarios {
		name := strings.Fields(row[0])[0]
		if strings.HasPrefix(row[0], "create on 1 member") {
			name = "create_1member"
		}
		found := false
		for _, s := range base.Scenarios {
			if s.Name != name {
				continue
			}
			found = true
			for i, v := range []float64{s.Ops, s.P50, s.P90, s.P99} {
				if len(row) <= i+1 {
					t.Errorf("scenario %s: row %v is short", name, row)
					break
				}
				if err := quotes(row[i+1], v); err != nil {
					t.Errorf("scenario %s, column %d: README says %v", name, i+2, err)
				}
			}
		}
		if !found {
			t.Errorf("README's scenario %q is not in bench/perf-baseline.json", row[0])
		}
	}
	checked := 0
	byID := map[int][]float64{}
	for _, tg := range base.Targets {
		byID[tg.ID] = append(byID[tg.ID], tg.Value)
	}
	seen := map[int]int{}
	for _, row := range tableRows(targets) {
		id, err := strconv.Atoi(row[0])
		if err != nil || len(row) < 5 {
			t.Errorf("targets row %v: no id or too short", row)
			continue
		}
		vals := byID[id]
		n := seen[id]
		seen[id]++
		if id == 6 || id == 8 || id == 9 || n >= len(vals) {
			continue // measured by the row's own command, not in the baseline
		}
		if err := quotes(row[3], vals[n]); err != nil {
			t.Errorf("target %d (%s): README says %v", id, row[1], err)
		}
		checked++
	}
	if checked < 6 {
		t.Errorf("checked %d targets against the baseline, want the 6 it computes", checked)
	}
}

// quotes accepts a figure rounded as shown and refuses another.
func TestQuotes(t *testing.T) {
	for _, c := range []struct {
		cell string
		v    float64
		ok   bool
	}{
		{"10271", 10271.378, true},
		{"2.54", 2.537514, true},
		{"2.53", 2.537514, false},
		{"1,788", 1788.11, true},
		{"8.07 ms (p50 5.79)", 8.074845, true},
		{"0.95; 0.92-1.01 over 11 runs", 0.9537, true},
		{"170", 169.79, true},
		{"n/a", 1, false},
	} {
		if err := quotes(c.cell, c.v); (err == nil) != c.ok {
			t.Errorf("quotes(%q, %v) = %v, want ok=%v", c.cell, c.v, err, c.ok)
		}
	}
}
