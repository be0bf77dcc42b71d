package daemonset

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPlace(t *testing.T) {
	node := func(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	ds := func(adjust func(*corev1.PodSpec)) *appsv1.DaemonSet {
		d := &appsv1.DaemonSet{}
		if adjust != nil {
			adjust(&d.Spec.Template.Spec)
		}
		return d
	}
	taint := func(key string, effect corev1.TaintEffect) corev1.Taint {
		return corev1.Taint{Key: key, Effect: effect}
	}
	for _, tc := range []struct {
		name      string
		ds        *appsv1.DaemonSet
		node      *corev1.Node
		run, keep bool
	}{
		{"plain node", ds(nil), node("a", nil), true, true},
		{"nodeSelector matches", ds(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"role": "edge"} }),
			node("a", map[string]string{"role": "edge"}), true, true},
		{"nodeSelector does not match", ds(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"role": "edge"} }),
			node("a", nil), false, false},
		{"required affinity on another node", ds(func(s *corev1.PodSpec) { s.Affinity = pinToNode(nil, "b") }),
			node("a", nil), false, false},
		{"nodeName elsewhere", ds(func(s *corev1.PodSpec) { s.NodeName = "b" }), node("a", nil), false, false},
		{"NoSchedule taint: stays, no new pod", ds(nil), node("a", nil, taint("dedicated", corev1.TaintEffectNoSchedule)), false, true},
		{"NoExecute taint: leaves", ds(nil), node("a", nil, taint("dedicated", corev1.TaintEffectNoExecute)), false, false},
		{"PreferNoSchedule ignored", ds(nil), node("a", nil, taint("dedicated", corev1.TaintEffectPreferNoSchedule)), true, true},
		{"daemon tolerations: unreachable NoExecute", ds(nil), node("a", nil, taint(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)), true, true},
		{"daemon tolerations: unschedulable", ds(nil), node("a", nil, taint(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule)), true, true},
		{"not-ready NoSchedule is not tolerated", ds(nil), node("a", nil, taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoSchedule)), false, true},
		{"network-unavailable only for hostNetwork", ds(nil), node("a", nil, taint(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)), false, true},
		{"network-unavailable tolerated with hostNetwork", ds(func(s *corev1.PodSpec) { s.HostNetwork = true }),
			node("a", nil, taint(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)), true, true},
		{"own toleration", ds(func(s *corev1.PodSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
		}), node("a", nil, taint("dedicated", corev1.TaintEffectNoExecute)), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := place(tc.ds, tc.node)
			if got.shouldRun != tc.run || got.shouldContinue != tc.keep {
				t.Errorf("place = %+v, want run %v keep %v", got, tc.run, tc.keep)
			}
		})
	}
}

func TestPinToNode(t *testing.T) {
	expr := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"z1"}}
	in := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr},
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"x"}}}}}}}}
	got := pinToNode(in, "n1")
	terms := got.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchExpressions) != 1 || terms[0].MatchExpressions[0].Key != "zone" ||
		len(terms[0].MatchFields) != 1 || !slices.Equal(terms[0].MatchFields[0].Values, []string{"n1"}) {
		t.Errorf("pinToNode = %+v", terms)
	}
	if in.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0] != "x" {
		t.Error("pinToNode changed its argument")
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Affinity: pinToNode(nil, "n2")}}
	if n := targetNode(pod); n != "n2" {
		t.Errorf("targetNode = %q, want n2", n)
	}
	pod.Spec.NodeName = "n3"
	if n := targetNode(pod); n != "n3" {
		t.Errorf("targetNode of a bound pod = %q, want n3", n)
	}
}

func TestDaemonTolerationsKeepOwn(t *testing.T) {
	spec := &corev1.PodSpec{Tolerations: []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(30))},
		{Key: "custom", Operator: corev1.TolerationOpExists}}}
	tols := daemonTolerations(spec)
	if len(tols) != 7 {
		t.Fatalf("%d tolerations: %+v", len(tols), tols)
	}
	if tols[0].TolerationSeconds != nil || tols[1].Key != "custom" {
		t.Errorf("tolerations %+v: not-ready must lose its tolerationSeconds, custom stays", tols)
	}
	if spec.Tolerations[0].TolerationSeconds == nil {
		t.Error("daemonTolerations changed the template")
	}
}
