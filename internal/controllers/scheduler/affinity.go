package scheduler

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// nodeMatcher is a pod's nodeSelector and required node affinity, parsed
// once per scheduling attempt (kube's NodeAffinity filter).
type nodeMatcher struct {
	selector map[string]string
	// terms are ORed; nil when the pod has no required node affinity.
	terms []nodeTerm
}

// nodeTerm is one nodeSelectorTerm: its requirements are ANDed. A term
// with no requirement, or an invalid one, matches no node.
type nodeTerm struct {
	labels, fields []requirement
	invalid        bool
}

type requirement struct {
	key    string
	op     corev1.NodeSelectorOperator
	values []string
	num    int64 // Gt, Lt
}

func newNodeMatcher(spec *corev1.PodSpec) nodeMatcher {
	m := nodeMatcher{selector: spec.NodeSelector}
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return m
	}
	m.terms = selectorTerms(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
	return m
}

// selectorTerms parses a NodeSelector's terms (ORed; none matches no
// node).
func selectorTerms(sel *corev1.NodeSelector) []nodeTerm {
	terms := []nodeTerm{}
	for _, t := range sel.NodeSelectorTerms {
		var nt nodeTerm
		for _, e := range t.MatchExpressions {
			r, ok := parseRequirement(e, false)
			nt.invalid = nt.invalid || !ok
			nt.labels = append(nt.labels, r)
		}
		for _, e := range t.MatchFields {
			r, ok := parseRequirement(e, true)
			nt.invalid = nt.invalid || !ok
			nt.fields = append(nt.fields, r)
		}
		nt.invalid = nt.invalid || len(nt.labels)+len(nt.fields) == 0
		terms = append(terms, nt)
	}
	return terms
}

// parseRequirement checks a requirement as kube's label and field
// selectors do; fields know only metadata.name, with In and NotIn.
func parseRequirement(e corev1.NodeSelectorRequirement, field bool) (requirement, bool) {
	r := requirement{key: e.Key, op: e.Operator, values: e.Values}
	if field && (e.Key != "metadata.name" || (e.Operator != corev1.NodeSelectorOpIn && e.Operator != corev1.NodeSelectorOpNotIn)) {
		return r, false
	}
	switch e.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		return r, len(e.Values) > 0
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		return r, len(e.Values) == 0
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(e.Values) != 1 {
			return r, false
		}
		n, err := strconv.ParseInt(e.Values[0], 10, 64)
		r.num = n
		return r, err == nil
	}
	return r, false
}

// empty tells that the matcher accepts every node.
func (m *nodeMatcher) empty() bool { return len(m.selector) == 0 && m.terms == nil }

// matches tells whether node satisfies the nodeSelector and one term.
func (m *nodeMatcher) matches(node *corev1.Node) bool {
	for k, v := range m.selector {
		if lv, ok := node.Labels[k]; !ok || lv != v {
			return false
		}
	}
	if m.terms == nil {
		return true
	}
	for i := range m.terms {
		if m.terms[i].matches(node) {
			return true
		}
	}
	return false
}

func (t *nodeTerm) matches(node *corev1.Node) bool {
	if t.invalid {
		return false
	}
	for i := range t.labels {
		v, ok := node.Labels[t.labels[i].key]
		if !t.labels[i].matches(v, ok) {
			return false
		}
	}
	for i := range t.fields {
		if !t.fields[i].matches(node.Name, true) {
			return false
		}
	}
	return true
}

// matches applies the requirement to a value (ok: the label exists).
func (r *requirement) matches(v string, ok bool) bool {
	switch r.op {
	case corev1.NodeSelectorOpIn:
		return ok && slices.Contains(r.values, v)
	case corev1.NodeSelectorOpNotIn:
		return !ok || !slices.Contains(r.values, v)
	case corev1.NodeSelectorOpExists:
		return ok
	case corev1.NodeSelectorOpDoesNotExist:
		return !ok
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !ok {
			return false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		if r.op == corev1.NodeSelectorOpGt {
			return n > r.num
		}
		return n < r.num
	}
	return false
}
