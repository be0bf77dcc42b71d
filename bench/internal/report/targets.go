package report

import "fmt"

// Target is one line of issue 4's targets table.
type Target struct {
	ID    int     `json:"id"`
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"` // "x" for ratios, "ms", "MiB"
	Goal  string  `json:"goal"`
	Pass  bool    `json:"pass"`
	Note  string  `json:"note,omitempty"`
}

const mib = 1 << 20

// ratio is a target "num ops/s ≥ min × den ops/s".
type ratio struct {
	id       int
	num, den string
	min      float64
}

var ratios = []ratio{
	{1, "list_table", "list_all", 0.5},
	{2, "list_selector", "list_all", 3},
	{3, "list_all", "static", 0.7},
	{4, "follower_list", "list_all", 0.9},
	{5, "create", "create_1member", 0.5},
}

// p99Limit is a target "scenario p99 < max ms".
type p99Limit struct {
	id    int
	name  string
	maxMs float64
}

var p99Limits = []p99Limit{
	{7, "watch_latency", 5},
	{7, "watch_fanout", 50},
}

// ComputeTargets evaluates every target r has the figures for, in the
// order of issue 4; targets whose scenarios did not run are left out.
func ComputeTargets(r *Report) []Target {
	var out []Target
	for _, q := range ratios {
		n, ok1 := r.Find(q.num)
		d, ok2 := r.Find(q.den)
		if !ok1 || !ok2 || d.OpsPerSec == 0 {
			continue
		}
		v := n.OpsPerSec / d.OpsPerSec
		out = append(out, Target{ID: q.id, Name: q.num + " / " + q.den + " ops/s", Value: v, Unit: "x",
			Goal: fmt.Sprintf(">= %g", q.min), Pass: v >= q.min})
	}
	for _, l := range p99Limits {
		s, ok := r.Find(l.name)
		if !ok {
			continue
		}
		out = append(out, Target{ID: l.id, Name: l.name + " p99", Value: s.P99Ms, Unit: "ms",
			Goal: fmt.Sprintf("< %g", l.maxMs), Pass: s.P99Ms < l.maxMs})
	}
	if m, f := r.Memory, r.Fill; m != nil && f != nil && m.Members > 0 && m.HeapLiveAfterFill > 0 {
		per := float64(m.HeapLiveAfterFill) / float64(m.Members)
		limit := 1.5*float64(f.StoredBytes) + 64*mib
		out = append(out, Target{ID: 8, Name: fmt.Sprintf("live heap per member, %d objects", f.Objects),
			Value: per / mib, Unit: "MiB", Goal: fmt.Sprintf("<= %.1f (1.5 x %.1f stored + 64)", limit/mib, float64(f.StoredBytes)/mib),
			Pass: per <= limit,
			Note: "in-process members share one Go heap (with the load clients): live heap after GC / members, not RSS"})
	}
	if t, ok := rssTarget(r); ok {
		out = append(out, t)
	}
	if i := r.IdleRSS; i != nil {
		v := float64(i.VmRSS) / mib
		out = append(out, Target{ID: 9, Name: "idle single member VmRSS", Value: v, Unit: "MiB",
			Goal: "< 40", Pass: v < 40, Note: fmt.Sprintf("separate `node` process, %gs after start (it released start-up memory at 3s)", i.WaitSeconds)})
	}
	return out
}

// RSSLimit is issue 20's bound on a member's RSS (target 8, measured on
// member processes): 1.5 × the stored JSON + 64 MiB.
func RSSLimit(stored int64) float64 { return 1.5*float64(stored) + 64*mib }

// rssTarget is target 8 on member processes (-processes): the largest
// VmRSS of any member, after the fill or at the end, against RSSLimit.
func rssTarget(r *Report) (Target, bool) {
	f := r.Fill
	if f == nil || len(r.MemberMemory) == 0 {
		return Target{}, false
	}
	worst := r.MemberMemory[0]
	for _, m := range r.MemberMemory[1:] {
		if m.VmRSS > worst.VmRSS {
			worst = m
		}
	}
	limit := RSSLimit(f.StoredBytes)
	v := float64(worst.VmRSS)
	return Target{ID: 8, Name: fmt.Sprintf("RSS per member, %d objects", f.Objects), Value: v / mib, Unit: "MiB",
		Goal: fmt.Sprintf("<= %.1f (1.5 x %.1f stored + 64)", limit/mib, float64(f.StoredBytes)/mib), Pass: v <= limit,
		Note: fmt.Sprintf("member processes: the largest VmRSS, member %s %s", worst.Member, worst.When)}, true
}
