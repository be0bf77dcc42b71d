package scheduler

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// node builds a Ready node with cpu cores, memory GiB and a pod limit;
// opts adjust it.
func node(name string, cpu, memGi, pods int64, opts ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(memGi<<30, resource.BinarySI),
				corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
			},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		}}
	for _, o := range opts {
		o(n)
	}
	return n
}

func labels(kv ...string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		for i := 0; i < len(kv); i += 2 {
			n.Labels[kv[i]] = kv[i+1]
		}
	}
}

func taint(key, value string, effect corev1.TaintEffect) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

func unschedulable(n *corev1.Node) { n.Spec.Unschedulable = true }

func ready(s corev1.ConditionStatus) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Status.Conditions[0].Status = s }
}

// pod builds a pod requesting cpu (millicores) and memory (MiB); opts
// adjust it.
func pod(name string, milliCPU, memMi int64, opts ...func(*corev1.Pod)) *corev1.Pod {
	req := corev1.ResourceList{}
	if milliCPU > 0 {
		req[corev1.ResourceCPU] = *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)
	}
	if memMi > 0 {
		req[corev1.ResourceMemory] = *resource.NewQuantity(memMi<<20, resource.BinarySI)
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: req}}}}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func on(node string) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Spec.NodeName = node } }

func ownedBy(uid string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: uid,
			UID: types.UID(uid), Controller: &yes}}
	}
}

func selector(kv ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			p.Spec.NodeSelector[kv[i]] = kv[i+1]
		}
	}
}

func tolerate(t corev1.Toleration) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Tolerations = append(p.Spec.Tolerations, t) }
}

// affinity sets required node affinity: terms of label expressions, the
// last term's fields from fields.
func affinity(terms ...corev1.NodeSelectorTerm) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
}

func expr(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

func nameIn(names ...string) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
		{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: names}}}
}

// TestDecide is the scheduler's decision on plain objects: each case
// names the node the pod must land on, or the Unschedulable message.
func TestDecide(t *testing.T) {
	small := func(name string, opts ...func(*corev1.Node)) *corev1.Node { return node(name, 4, 8, 110, opts...) }
	cases := []struct {
		name  string
		nodes []*corev1.Node
		bound []*corev1.Pod // already on nodes
		pod   *corev1.Pod
		want  string // node name, or the Unschedulable message
	}{
		{name: "requests: the node with room", nodes: []*corev1.Node{small("a"), small("b")},
			bound: []*corev1.Pod{pod("x", 3500, 0, on("a"))},
			pod:   pod("p", 1000, 0), want: "b"},
		{name: "requests: least allocated wins", nodes: []*corev1.Node{small("a"), small("b")},
			bound: []*corev1.Pod{pod("x", 500, 1024, on("a"))},
			pod:   pod("p", 100, 100), want: "b"},
		{name: "requests: insufficient cpu and memory everywhere",
			nodes: []*corev1.Node{small("a"), small("b")}, bound: []*corev1.Pod{pod("x", 3000, 0, on("a"))},
			pod:  pod("p", 2000, 9000),
			want: "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory."},
		{name: "requests: too many pods", nodes: []*corev1.Node{node("a", 4, 8, 1)},
			bound: []*corev1.Pod{pod("x", 0, 0, on("a"))},
			pod:   pod("p", 0, 0), want: "0/1 nodes are available: 1 Too many pods."},
		{name: "requests: terminal pods free their node", nodes: []*corev1.Node{node("a", 4, 8, 1)},
			bound: []*corev1.Pod{pod("x", 4000, 0, on("a"), func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })},
			pod:   pod("p", 4000, 0), want: "a"},
		{name: "requests: limits without requests count", nodes: []*corev1.Node{small("a")},
			pod: pod("p", 0, 0, func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5")}
			}), want: "0/1 nodes are available: 1 Insufficient cpu."},
		{name: "nodeSelector", nodes: []*corev1.Node{small("a"), small("b", labels("disk", "ssd"))},
			pod: pod("p", 100, 0, selector("disk", "ssd")), want: "b"},
		{name: "nodeSelector and cpu mixed",
			nodes: []*corev1.Node{small("a"), small("b"), node("c", 1, 8, 110, labels("zone", "z1"))},
			pod:   pod("p", 2000, 0, selector("zone", "z1")),
			want:  "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector."},
		{name: "affinity In", nodes: []*corev1.Node{small("a", labels("zone", "z1")), small("b", labels("zone", "z2"))},
			pod: pod("p", 0, 0, affinity(expr("zone", corev1.NodeSelectorOpIn, "z2", "z3"))), want: "b"},
		{name: "affinity NotIn", nodes: []*corev1.Node{small("a", labels("zone", "z1")), small("b", labels("zone", "z2"))},
			pod: pod("p", 0, 0, affinity(expr("zone", corev1.NodeSelectorOpNotIn, "z1"))), want: "b"},
		{name: "affinity Exists", nodes: []*corev1.Node{small("a"), small("b", labels("gpu", ""))},
			pod: pod("p", 0, 0, affinity(expr("gpu", corev1.NodeSelectorOpExists))), want: "b"},
		{name: "affinity DoesNotExist", nodes: []*corev1.Node{small("a", labels("gpu", "")), small("b")},
			pod: pod("p", 0, 0, affinity(expr("gpu", corev1.NodeSelectorOpDoesNotExist))), want: "b"},
		{name: "affinity Gt", nodes: []*corev1.Node{small("a", labels("cores", "8")), small("b", labels("cores", "64"))},
			pod: pod("p", 0, 0, affinity(expr("cores", corev1.NodeSelectorOpGt, "16"))), want: "b"},
		{name: "affinity Lt", nodes: []*corev1.Node{small("a", labels("cores", "64")), small("b", labels("cores", "8"))},
			pod: pod("p", 0, 0, affinity(expr("cores", corev1.NodeSelectorOpLt, "16"))), want: "b"},
		{name: "affinity terms are ORed", nodes: []*corev1.Node{small("a"), small("b"), small("c", labels("x", "1"))},
			pod: pod("p", 0, 0, affinity(expr("x", corev1.NodeSelectorOpIn, "1"), nameIn("b"))), want: "b"},
		{name: "affinity matchFields metadata.name", nodes: []*corev1.Node{small("a"), small("b")},
			pod: pod("p", 0, 0, affinity(nameIn("b"))), want: "b"},
		{name: "affinity matches nothing",
			nodes: []*corev1.Node{small("a"), small("b")},
			pod:   pod("p", 0, 0, affinity(expr("cores", corev1.NodeSelectorOpGt, "not-a-number"))),
			want:  "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."},
		{name: "taint NoSchedule avoided", nodes: []*corev1.Node{small("a", taint("dedicated", "db", corev1.TaintEffectNoSchedule)), small("b")},
			bound: []*corev1.Pod{pod("x", 2000, 0, on("b"))},
			pod:   pod("p", 0, 0), want: "b"},
		{name: "taint tolerated", nodes: []*corev1.Node{small("a", taint("dedicated", "db", corev1.TaintEffectNoSchedule)), small("b")},
			bound: []*corev1.Pod{pod("x", 2000, 0, on("b"))},
			pod: pod("p", 0, 0, tolerate(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db",
				Effect: corev1.TaintEffectNoSchedule})), want: "a"},
		{name: "taint PreferNoSchedule does not filter", nodes: []*corev1.Node{small("a", taint("k", "", corev1.TaintEffectPreferNoSchedule))},
			pod: pod("p", 0, 0), want: "a"},
		{name: "taints untolerated everywhere",
			nodes: []*corev1.Node{small("a", taint("k", "v", corev1.TaintEffectNoExecute)),
				small("b", taint(corev1.TaintNodeUnreachable, "", corev1.TaintEffectNoSchedule))},
			pod: pod("p", 0, 0, tolerate(corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists,
				Effect: corev1.TaintEffectNoSchedule})),
			want: "0/2 nodes are available: 2 node(s) had untolerated taint(s)."},
		{name: "unschedulable node", nodes: []*corev1.Node{small("a", unschedulable), small("b")},
			bound: []*corev1.Pod{pod("x", 3000, 0, on("b"))},
			pod:   pod("p", 0, 0), want: "b"},
		{name: "unschedulable tolerated", nodes: []*corev1.Node{small("a", unschedulable), small("b")},
			bound: []*corev1.Pod{pod("x", 3000, 0, on("b"))},
			pod:   pod("p", 0, 0, tolerate(corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists})),
			want:  "a"},
		{name: "unschedulable only", nodes: []*corev1.Node{small("a", unschedulable)},
			pod: pod("p", 0, 0), want: "0/1 nodes are available: 1 node(s) were unschedulable."},
		{name: "not ready", nodes: []*corev1.Node{small("a", ready(corev1.ConditionFalse)), small("b", ready(corev1.ConditionUnknown))},
			pod: pod("p", 0, 0), want: "0/2 nodes are available: 2 node(s) were not ready."},
		{name: "not ready tolerated", nodes: []*corev1.Node{small("a", ready(corev1.ConditionFalse)), small("b", ready(corev1.ConditionUnknown))},
			pod:  pod("p", 0, 0, tolerate(corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists})),
			want: "b"},
		{name: "spread: the owner's pods go to another node",
			nodes: []*corev1.Node{small("a"), small("b")},
			bound: []*corev1.Pod{pod("x", 100, 0, on("a"), ownedBy("rs")), pod("y", 500, 0, on("b"))},
			pod:   pod("p", 100, 0, ownedBy("rs")), want: "b"},
		{name: "spread: another owner's pods do not count",
			nodes: []*corev1.Node{small("a"), small("b")},
			bound: []*corev1.Pod{pod("x", 100, 0, on("a"), ownedBy("rs")), pod("y", 500, 0, on("b"))},
			pod:   pod("p", 100, 0, ownedBy("other")), want: "a"},
		{name: "tie: first node by name", nodes: []*corev1.Node{small("c"), small("b"), small("d")},
			pod: pod("p", 100, 0), want: "b"},
		{name: "no nodes", pod: pod("p", 0, 0), want: "no nodes available to schedule pods"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newNodeCache()
			for _, n := range tc.nodes {
				c.setNode(n.Name, n)
			}
			for _, p := range tc.bound {
				c.setPod(p.Namespace+"/"+p.Name, p)
			}
			best, fit, _ := decide(newPodInfo(tc.pod), c.nodeList(), nil)
			got := ""
			switch {
			case best != nil && fit != nil:
				t.Fatalf("both a node %s and an error %v", best.name, fit)
			case best != nil:
				got = best.name
			case fit != nil:
				got = fit.Error()
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCacheAssume: an assumed pod counts until its binding is seen or
// forgotten, and is not counted twice.
func TestCacheAssume(t *testing.T) {
	c := newNodeCache()
	c.setNode("a", node("a", 4, 8, 110))
	p := pod("p", 1000, 0)
	c.mu.Lock()
	c.assume("ns/p", newPodInfo(p), "a")
	c.mu.Unlock()
	requested := func() int64 { return c.nodes["a"].requested.milliCPU }
	if got := requested(); got != 1000 {
		t.Fatalf("assumed: %dm requested, want 1000m", got)
	}
	c.setPod("ns/p", p) // an update from before the binding
	if got := requested(); got != 1000 {
		t.Fatalf("after an older update: %dm requested, want 1000m", got)
	}
	bound := p.DeepCopy()
	bound.Spec.NodeName = "a"
	c.setPod("ns/p", bound)
	c.forget("ns/p", p.UID) // a bound pod is no longer an assumption
	if got := requested(); got != 1000 || c.pods["ns/p"].assumed {
		t.Fatalf("bound: %dm requested (want 1000m), assumed=%v", got, c.pods["ns/p"].assumed)
	}
	if !c.deletePod("ns/p") || requested() != 0 {
		t.Fatalf("deleted: %dm requested, want 0", requested())
	}
	c.mu.Lock()
	c.assume("ns/q", newPodInfo(pod("q", 500, 0)), "a")
	c.mu.Unlock()
	c.forget("ns/q", "uid-q")
	if got := requested(); got != 0 {
		t.Fatalf("forgotten: %dm requested, want 0", got)
	}
}

// BenchmarkDecide is one decision among many nodes with bound pods.
func BenchmarkDecide(b *testing.B) {
	for _, nodes := range []int{100, 1000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			c := newNodeCache()
			for i := range nodes {
				name := fmt.Sprintf("sim-node-%d", i)
				c.setNode(name, node(name, 32, 256, 110))
				for j := range 5 {
					c.setPod(fmt.Sprintf("ns/p-%d-%d", i, j), pod(fmt.Sprintf("p-%d-%d", i, j), 100, 128, on(name), ownedBy("rs")))
				}
			}
			p := newPodInfo(pod("new", 100, 128, ownedBy("rs")))
			list := c.nodeList()
			var scratch []*nodeInfo
			b.ReportAllocs()
			for b.Loop() {
				var best *nodeInfo
				best, _, scratch = decide(p, list, scratch)
				if best == nil {
					b.Fatal("no node")
				}
			}
		})
	}
}
