package scheduler

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The reasons a node is rejected, as kube words them.
const (
	reasonUnschedulable = "node(s) were unschedulable"
	reasonTaints        = "node(s) had untolerated taint(s)"
	reasonNotReady      = "node(s) were not ready"
	reasonAffinity      = "node(s) didn't match Pod's node affinity/selector"
	reasonTooManyPods   = "Too many pods"
)

// errNoNodes is kube's answer when the cluster has no node at all.
const errNoNodes = "no nodes available to schedule pods"

// podInfo is the pod being scheduled, with what the decision needs
// computed once.
type podInfo struct {
	pod                    *corev1.Pod
	req                    resources
	nonZeroCPU, nonZeroMem int64
	owner                  types.UID
	match                  nodeMatcher
	// vol is what the pod's claims require (nil: it has none).
	vol *volumeInfo
}

func newPodInfo(pod *corev1.Pod) *podInfo {
	p := &podInfo{pod: pod, owner: ownerOf(pod), match: newNodeMatcher(&pod.Spec)}
	p.req, p.nonZeroCPU, p.nonZeroMem = podRequests(&pod.Spec)
	return p
}

// fitError says why no node fits: the number of nodes and how many of
// them were rejected for each reason.
type fitError struct {
	nodes   int
	reasons map[string]int
	// preFilter is why the pod fits no node at all (kube's PreFilter
	// message).
	preFilter string
}

// Error is kube's FitError message.
func (f *fitError) Error() string {
	if f.nodes == 0 {
		return errNoNodes
	}
	if f.preFilter != "" {
		return fmt.Sprintf("0/%d nodes are available: %s.", f.nodes, f.preFilter)
	}
	hist := make([]string, 0, len(f.reasons))
	for r, n := range f.reasons {
		hist = append(hist, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(hist)
	return fmt.Sprintf("0/%d nodes are available: %s.", f.nodes, strings.Join(hist, ", "))
}

// decide picks the node for p among nodes (sorted by name; nodes whose
// object is unknown are skipped), or says why none fits. feasible is
// scratch space, returned for reuse.
func decide(p *podInfo, nodes []*nodeInfo, feasible []*nodeInfo) (*nodeInfo, *fitError, []*nodeInfo) {
	feasible = feasible[:0]
	var maxOwned int32
	known := 0
	if p.vol != nil && p.vol.unresolvable != "" {
		for _, n := range nodes {
			if n.node != nil {
				known++
			}
		}
		return nil, &fitError{nodes: known, preFilter: p.vol.unresolvable}, feasible
	}
	for _, n := range nodes {
		if n.node == nil {
			continue
		}
		known++
		if filter(p, n, nil) {
			feasible = append(feasible, n)
			if p.owner != "" {
				maxOwned = max(maxOwned, n.owners[p.owner])
			}
		}
	}
	if len(feasible) == 0 {
		fe := &fitError{nodes: known, reasons: make(map[string]int)}
		for _, n := range nodes {
			if n.node != nil {
				filter(p, n, func(r string) { fe.reasons[r]++ })
			}
		}
		return nil, fe, feasible
	}
	var best *nodeInfo
	bestScore := int64(-1)
	for _, n := range feasible {
		if s := score(p, n, maxOwned); s > bestScore {
			best, bestScore = n, s
		}
	}
	return best, nil, feasible
}

// filter tells whether p fits n. Like kube's filter plugins it stops at
// the first failing check; the resource check reports every insufficient
// resource. why, when not nil, is told the reasons.
func filter(p *podInfo, n *nodeInfo, why func(string)) bool {
	spec, node := &p.pod.Spec, n.node
	if node.Spec.Unschedulable && !tolerated(spec.Tolerations, &unschedulableTaint) {
		return reject(why, reasonUnschedulable)
	}
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !tolerated(spec.Tolerations, t) {
			return reject(why, reasonTaints)
		}
	}
	if n.ready != corev1.ConditionTrue && !tolerated(spec.Tolerations, readinessTaint(n.ready)) {
		return reject(why, reasonNotReady)
	}
	if !p.match.empty() && !p.match.matches(node) {
		return reject(why, reasonAffinity)
	}
	if !fits(p, n, why) {
		return false
	}
	if p.vol != nil {
		if r := p.vol.fits(node); r != "" {
			return reject(why, r)
		}
	}
	return true
}

// fits is kube's NodeResourcesFit filter: the pod count, then each
// resource the pod requests against what the node has left.
func fits(p *podInfo, n *nodeInfo, why func(string)) bool {
	ok := true
	// fail records a reason; true means stop (nobody wants the others).
	fail := func(reason string) bool {
		ok = false
		if why != nil {
			why(reason)
		}
		return why == nil
	}
	a, r := &n.allocatable, &n.requested
	if n.pods+1 > n.allocPods && fail(reasonTooManyPods) {
		return false
	}
	if p.req.milliCPU > 0 && p.req.milliCPU > a.milliCPU-r.milliCPU && fail("Insufficient cpu") {
		return false
	}
	if p.req.memory > 0 && p.req.memory > a.memory-r.memory && fail("Insufficient memory") {
		return false
	}
	if p.req.ephemeral > 0 && p.req.ephemeral > a.ephemeral-r.ephemeral && fail("Insufficient ephemeral-storage") {
		return false
	}
	for name, v := range p.req.scalar {
		if v > 0 && v > a.scalar[name]-r.scalar[name] && fail("Insufficient "+string(name)) {
			return false
		}
	}
	return ok
}

func reject(why func(string), reason string) bool {
	if why != nil {
		why(reason)
	}
	return false
}

var (
	unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	notReadyTaint      = corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	unreachableTaint   = corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule}
)

// readinessTaint is the taint the node lifecycle controller gives a node
// in that Ready state (the pod tolerating it may go there).
func readinessTaint(ready corev1.ConditionStatus) *corev1.Taint {
	if ready == corev1.ConditionFalse {
		return &notReadyTaint
	}
	return &unreachableTaint
}

func tolerated(tols []corev1.Toleration, t *corev1.Taint) bool {
	for i := range tols {
		if tols[i].ToleratesTaint(logr.Discard(), t, true) {
			return true
		}
	}
	return false
}

// score is least allocated (cpu and memory, 0-100) plus twice the spread
// score (100 on the nodes with the fewest pods of p's owner).
func score(p *podInfo, n *nodeInfo, maxOwned int32) int64 {
	la := (leastAllocated(n.allocatable.milliCPU, n.nonZeroCPU+p.nonZeroCPU) +
		leastAllocated(n.allocatable.memory, n.nonZeroMem+p.nonZeroMem)) / 2
	spread := int64(100)
	if p.owner != "" && maxOwned > 0 {
		spread = 100 * int64(maxOwned-n.owners[p.owner]) / int64(maxOwned)
	}
	return la + 2*spread
}

func leastAllocated(capacity, requested int64) int64 {
	if capacity <= 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * 100 / capacity
}
