package daemonset

import (
	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	schedhelpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// nodeNameField is the node field the daemon pods' affinity names.
const nodeNameField = "metadata.name"

// placement says whether a node should run a DaemonSet's pod.
type placement struct {
	// shouldRun: a new pod may be placed on the node (selector, required
	// affinity, NoSchedule and NoExecute taints all tolerated).
	shouldRun bool
	// shouldContinue: a pod already on the node may stay (only the
	// NoExecute taints count).
	shouldContinue bool
}

// place decides for ds and node, as kube's nodeShouldRunDaemonPod: the
// template with the daemon tolerations is checked against the node.
func place(ds *appsv1.DaemonSet, node *corev1.Node) placement {
	spec := &ds.Spec.Template.Spec
	if spec.NodeName != "" && spec.NodeName != node.Name {
		return placement{}
	}
	if ok, err := nodeaffinity.NewRequiredNodeAffinity(spec.NodeSelector, spec.Affinity).Match(node); err != nil || !ok {
		return placement{}
	}
	tols := daemonTolerations(spec)
	_, untolerated := schedhelpers.FindMatchingUntoleratedTaint(logr.Discard(), node.Spec.Taints, tols, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, true)
	_, evicting := schedhelpers.FindMatchingUntoleratedTaint(logr.Discard(), node.Spec.Taints, tols, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoExecute
	}, true)
	return placement{shouldRun: !untolerated, shouldContinue: !evicting}
}

// daemonTolerations returns spec's tolerations with kube's daemon pod
// tolerations added or updated (AddOrUpdateDaemonPodTolerations).
func daemonTolerations(spec *corev1.PodSpec) []corev1.Toleration {
	tols := append([]corev1.Toleration(nil), spec.Tolerations...)
	add := func(key string, effect corev1.TaintEffect) {
		t := corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect}
		for i := range tols {
			if tols[i].MatchToleration(&t) {
				if !apiequality.Semantic.DeepEqual(tols[i], t) {
					tols[i] = t
				}
				return
			}
		}
		tols = append(tols, t)
	}
	add(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeDiskPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodeMemoryPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodePIDPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)
	}
	return tols
}

// pinToNode returns affinity (copied) with its required node affinity
// restricted to the node named node: every term's matchFields become
// metadata.name In [node] (its matchExpressions stay), and a single such
// term when there was none (kube's ReplaceDaemonSetPodNodeNameNodeAffinity).
func pinToNode(affinity *corev1.Affinity, node string) *corev1.Affinity {
	req := []corev1.NodeSelectorRequirement{{Key: nodeNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}
	a := affinity.DeepCopy()
	if a == nil {
		a = &corev1.Affinity{}
	}
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := a.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil || len(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: req}}}
		return a
	}
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for i := range terms {
		terms[i].MatchFields = req
	}
	return a
}

// targetNode is the node a daemon pod is on or meant for: its nodeName,
// else the single metadata.name its required node affinity names ("" if
// neither).
func targetNode(pod *corev1.Pod) string {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == nodeNameField && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}
