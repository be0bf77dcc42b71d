package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/litek8s/litek8s/bench/internal/report"
)

// Thresholds decide what a regression is.
type Thresholds struct {
	// OpsLoss is the largest tolerated loss of ops/s, as a fraction of
	// base (0.20: a branch below 80% of base regressed).
	OpsLoss float64
	// P99Gain is the largest tolerated growth of p99, as a fraction of
	// base (0.40).
	P99Gain float64
	// P99FloorMs ignores p99 growths smaller than this in absolute terms:
	// at a fraction of a millisecond they are scheduler noise.
	P99FloorMs float64
}

// DefaultThresholds are issue 4's: 20% of ops/s, 40% of p99.
var DefaultThresholds = Thresholds{OpsLoss: 0.20, P99Gain: 0.40, P99FloorMs: 0.25}

// Delta is one scenario compared.
type Delta struct {
	Name         string
	Base, Branch *report.Scenario // nil when the side did not measure it
	// OpsChange and P99Change are branch/base - 1.
	OpsChange, P99Change float64
	Regressed            bool
	Why                  string // what regressed, or why nothing was compared
}

// Compare compares every scenario either side measured, in the branch's
// order then the base's.
func Compare(base, branch *report.Report, th Thresholds) []Delta {
	var out []Delta
	seen := map[string]bool{}
	add := func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		d := Delta{Name: name}
		if s, ok := base.Find(name); ok {
			d.Base = s
		}
		if s, ok := branch.Find(name); ok {
			d.Branch = s
		}
		switch {
		case d.Base == nil && d.Branch == nil:
			d.Why = "skipped"
		case d.Base == nil:
			d.Why = "new"
		case d.Branch == nil:
			d.Why = "not measured on the branch"
		default:
			compareOne(&d, th)
		}
		out = append(out, d)
	}
	for _, s := range branch.Scenarios {
		add(s.Name)
	}
	for _, s := range base.Scenarios {
		add(s.Name)
	}
	return out
}

func compareOne(d *Delta, th Thresholds) {
	b, r := d.Base, d.Branch
	if b.OpsPerSec > 0 {
		d.OpsChange = r.OpsPerSec/b.OpsPerSec - 1
	}
	if b.P99Ms > 0 {
		d.P99Change = r.P99Ms/b.P99Ms - 1
	}
	var why []string
	if b.OpsPerSec > 0 && -d.OpsChange > th.OpsLoss {
		why = append(why, fmt.Sprintf("ops/s %+.0f%%", 100*d.OpsChange))
	}
	if b.P99Ms > 0 && d.P99Change > th.P99Gain && r.P99Ms-b.P99Ms >= th.P99FloorMs {
		why = append(why, fmt.Sprintf("p99 %+.0f%%", 100*d.P99Change))
	}
	d.Regressed = len(why) > 0
	d.Why = strings.Join(why, ", ")
}

// Regressed returns the names of the regressed scenarios.
func Regressed(ds []Delta) []string {
	var out []string
	for _, d := range ds {
		if d.Regressed {
			out = append(out, d.Name)
		}
	}
	return out
}

// Confirmed returns the scenarios that regressed in the first comparison
// and again in the second (noise rarely strikes the same scenario twice).
func Confirmed(first, again []Delta) []string {
	twice := map[string]bool{}
	for _, n := range Regressed(again) {
		twice[n] = true
	}
	var out []string
	for _, n := range Regressed(first) {
		if twice[n] {
			out = append(out, n)
		}
	}
	return out
}

func pct(x float64) string { return fmt.Sprintf("%+.1f%%", 100*x) }

// SideBySide is the base and branch tables next to each other.
func SideBySide(ds []Delta) *report.Table {
	t := &report.Table{Header: []string{"scenario",
		"base ops/s", "p50", "p90", "p99", "|",
		"branch ops/s", "p50", "p90", "p99", "|",
		"ops/s", "p99", ""}}
	cells := func(s *report.Scenario) []string {
		if s == nil {
			return []string{"-", "-", "-", "-"}
		}
		return []string{report.FormatOps(s.OpsPerSec), report.FormatMs(s.P50Ms), report.FormatMs(s.P90Ms), report.FormatMs(s.P99Ms)}
	}
	for _, d := range ds {
		row := append([]string{d.Name}, cells(d.Base)...)
		row = append(row, "|")
		row = append(row, cells(d.Branch)...)
		row = append(row, "|")
		if d.Base != nil && d.Branch != nil {
			mark := "ok"
			if d.Regressed {
				mark = "REGRESSED: " + d.Why
			}
			row = append(row, pct(d.OpsChange), pct(d.P99Change), mark)
		} else {
			row = append(row, "", "", d.Why)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// TargetsSideBySide is each side's issue 4 targets.
func TargetsSideBySide(base, branch *report.Report) *report.Table {
	t := &report.Table{Header: []string{"target", "goal", "base", "branch"}}
	type pair struct{ b, r *report.Target }
	var order []string
	m := map[string]*pair{}
	note := func(ts []report.Target, branch bool) {
		for i := range ts {
			x := &ts[i]
			key := fmt.Sprintf("%d. %s", x.ID, x.Name)
			p, ok := m[key]
			if !ok {
				p = &pair{}
				m[key] = p
				order = append(order, key)
			}
			if branch {
				p.r = x
			} else {
				p.b = x
			}
		}
	}
	note(branch.Targets, true)
	note(base.Targets, false)
	show := func(x *report.Target) string {
		if x == nil {
			return "-"
		}
		mark := "FAIL"
		if x.Pass {
			mark = "pass"
		}
		unit := x.Unit
		if unit != "x" {
			unit = " " + unit
		}
		return fmt.Sprintf("%.2f%s %s", x.Value, unit, mark)
	}
	for _, k := range order {
		p := m[k]
		goal := ""
		if p.r != nil {
			goal = p.r.Goal
		} else if p.b != nil {
			goal = p.b.Goal
		}
		t.Rows = append(t.Rows, []string{k, goal, show(p.b), show(p.r)})
	}
	return t
}

// writeComparison prints one comparison with its title.
func writeComparison(w io.Writer, title string, base, branch *report.Report, ds []Delta) {
	fmt.Fprintf(w, "%s\n  base:   %s, %d members, %d clients, %d objects, %d runs of %s (%s)\n  branch: %s, %d members, %d clients, %d objects, %d runs of %s (%s)\n\n",
		title, base.Date, base.Config.Members, base.Config.Clients, base.Config.Objects, base.Config.Runs, base.Config.Duration, note(base),
		branch.Date, branch.Config.Members, branch.Config.Clients, branch.Config.Objects, branch.Config.Runs, branch.Config.Duration, note(branch))
	SideBySide(ds).Write(w, false)
	fmt.Fprintln(w)
}

func note(r *report.Report) string {
	if len(r.Warnings) > 0 {
		return "warnings: " + strings.Join(r.Warnings, "; ")
	}
	return "no warnings"
}
