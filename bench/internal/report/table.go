package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// FormatOps formats an ops/s figure: whole numbers from 100 up.
func FormatOps(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// FormatMs formats a latency in milliseconds.
func FormatMs(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// Table is rows of cells printed either aligned for a terminal or as a
// Markdown table, then its notes, one a line.
type Table struct {
	Header []string
	Rows   [][]string
	Notes  []string
}

// Write prints t.
func (t *Table) Write(w io.Writer, markdown bool) error {
	if markdown {
		line := func(cells []string) string { return "| " + strings.Join(cells, " | ") + " |\n" }
		sep := make([]string, len(t.Header))
		for i := range sep {
			sep[i] = "---"
		}
		var b strings.Builder
		b.WriteString(line(t.Header))
		b.WriteString(line(sep))
		for _, r := range t.Rows {
			b.WriteString(line(r))
		}
		for _, n := range t.Notes {
			b.WriteString("\n" + n + "\n")
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, r := range append([][]string{t.Header}, t.Rows...) {
		fmt.Fprint(tw, strings.Join(r, "\t")+"\t\n")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range t.Notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// ScenarioTable is the scenario, ops/s, p50, p90, p99 table of r.
func ScenarioTable(r *Report) *Table {
	t := &Table{Header: []string{"scenario", "ops/s", "p50 ms", "p90 ms", "p99 ms"}}
	for _, s := range r.Scenarios {
		if s.Skipped != "" {
			t.Rows = append(t.Rows, []string{s.Name, "skipped", "", "", ""})
			t.Notes = append(t.Notes, s.Name+" skipped: "+s.Skipped)
			continue
		}
		t.Rows = append(t.Rows, []string{s.Name, FormatOps(s.OpsPerSec), FormatMs(s.P50Ms), FormatMs(s.P90Ms), FormatMs(s.P99Ms)})
	}
	return t
}

// TargetTable is the targets table: measured figure, goal, pass or fail.
func TargetTable(ts []Target) *Table {
	t := &Table{Header: []string{"target", "measured", "goal", ""}}
	for _, x := range ts {
		mark := "FAIL"
		if x.Pass {
			mark = "pass"
		}
		v := fmt.Sprintf("%.2f", x.Value)
		if x.Unit != "x" {
			v += " " + x.Unit
		} else {
			v += "x"
		}
		t.Rows = append(t.Rows, []string{fmt.Sprintf("%d. %s", x.ID, x.Name), v, x.Goal, mark})
	}
	return t
}

// MemoryTable is the member processes' memory (-processes): a row per
// member and point of the run, in MiB, with the RSS against the fill's
// stored JSON and issue 20's bound.
func MemoryTable(r *Report) *Table {
	t := &Table{Header: []string{"member", "when", "RSS MiB", "anon", "file", "HWM", "heap live", "heap in use",
		"stacks", "Go sys", "stored JSON MiB", "RSS/stored", "RSS <= 1.5 x stored + 64"}}
	var stored int64
	if r.Fill != nil {
		stored = r.Fill.StoredBytes
	}
	m := func(n uint64) string { return fmt.Sprintf("%.1f", float64(n)/mib) }
	for _, x := range r.MemberMemory {
		ratio, ok := "-", "-"
		if stored > 0 {
			ratio = fmt.Sprintf("%.2f", float64(x.VmRSS)/float64(stored))
			ok = "no"
			if float64(x.VmRSS) <= RSSLimit(stored) {
				ok = "yes"
			}
		}
		t.Rows = append(t.Rows, []string{x.Member, x.When, m(x.VmRSS), m(x.RssAnon), m(x.RssFile), m(x.VmHWM),
			m(x.HeapLive), m(x.HeapInuse), m(x.StackInuse), m(x.GoSys), fmt.Sprintf("%.1f", float64(stored)/mib), ratio, ok})
	}
	t.Notes = append(t.Notes, "RSS, anon, file and HWM (peak RSS) from /proc/PID/status, read before the heap profile's GC; "+
		"heap live is HeapAlloc after that GC; stored JSON is the fill's objects x object bytes (the write scenarios add a little by the end)")
	return t
}

// OpsTable is the table of -ops: a row per figure, in the order the ops
// ran.
func OpsTable(o *Ops) *Table {
	t := &Table{Header: []string{"op", "member", "measured", "figure"}}
	ms := func(v float64) string { return FormatMs(v) + " ms" }
	m := func(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/mib) }
	row := func(op, member, what, fig string) { t.Rows = append(t.Rows, []string{op, member, what, fig}) }
	for _, r := range []struct {
		op, signal string
		r          *RestartOp
	}{{"restart", "SIGTERM", o.Restart}, {"kill", "SIGKILL", o.Kill}} {
		if r.r == nil {
			continue
		}
		row(r.op, r.r.Member, r.signal+" -> exited", ms(r.r.StopMs))
		row(r.op, r.r.Member, "exec -> serving line", ms(r.r.ServingMs))
		row(r.op, r.r.Member, "exec -> /readyz 200", ms(r.r.ReadyMs))
		row(r.op, r.r.Member, fmt.Sprintf("exec -> local GET and list (%d items)", r.r.Items), ms(r.r.DataMs))
		row(r.op, r.r.Member, "RSS then", m(r.r.VmRSS))
	}
	if j := o.Join; j != nil {
		row("join", j.Member, "exec -> serving line", ms(j.ServingMs))
		row("join", j.Member, "exec -> voter", ms(j.VoterMs))
		row("join", j.Member, fmt.Sprintf("exec -> local GET and list (%d items)", j.Items), ms(j.DataMs))
		snap := "none installed (replayed the log)"
		if j.SnapshotsInstalled > 0 {
			snap = fmt.Sprintf("%d, %.1f MiB, installed in %s", j.SnapshotsInstalled, float64(j.SnapshotBytes)/mib, ms(j.SnapshotInstallMs))
		}
		row("join", j.Member, "snapshots", snap)
		row("join", j.Member, "RSS then", m(j.VmRSS))
		row("join", j.Member, "remove -> back to the cluster's members", ms(j.RemoveMs))
	}
	if s := o.Snapshot; s != nil {
		row("snapshot", s.Member, fmt.Sprintf("ctl snapshot save (%d objects, index %d)", s.Objects, s.Index), ms(s.SaveMs))
		row("snapshot", s.Member, "backup file", fmt.Sprintf("%.1f MiB", float64(s.FileBytes)/mib))
		row("snapshot", "r0", "ctl snapshot restore", ms(s.RestoreMs))
		row("snapshot", "r0", "exec -> serving line", ms(s.ServingMs))
		row("snapshot", "r0", "exec -> /readyz 200", ms(s.ReadyMs))
		row("snapshot", "r0", fmt.Sprintf("exec -> local GET and list (%d items)", s.Items), ms(s.DataMs))
		row("snapshot", "r0", "RSS then", m(s.VmRSS))
	}
	t.Notes = append(t.Notes, "exec is the start of the node process; local GET and list: a GET of a list object with "+
		"resourceVersion=0 answers its resourceVersion on the leader, and a resourceVersion=0 list of the list "+
		"namespace has every object (the member's own store)")
	return t
}
