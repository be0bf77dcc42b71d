package statefulset

import (
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// parentAndOrdinal splits a pod name <parent>-<ordinal>; the ordinal is
// -1 when the name does not end in one (kube's "(.*)-([0-9]+)$", with a
// parent but -1 when the number overflows an int32).
func parentAndOrdinal(name string) (string, int) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return "", -1
	}
	digits := name[i+1:]
	for _, r := range digits {
		if r < '0' || r > '9' {
			return "", -1
		}
	}
	n, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return name[:i], -1
	}
	return name[:i], int(n)
}

func ordinalOf(pod *corev1.Pod) int {
	_, o := parentAndOrdinal(pod.Name)
	return o
}

// isMemberOf reports whether pod is named like one of set's pods.
func isMemberOf(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	parent, _ := parentAndOrdinal(pod.Name)
	return parent == set.Name
}

func startOrdinal(set *appsv1.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

func replicasOf(set *appsv1.StatefulSet) int {
	if set.Spec.Replicas == nil {
		return 1
	}
	return int(*set.Spec.Replicas)
}

// inRange reports whether pod's ordinal is one set keeps.
func inRange(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	o, start := ordinalOf(pod), startOrdinal(set)
	return o >= start && o < start+replicasOf(set)
}

func podName(set *appsv1.StatefulSet, ordinal int) string {
	return set.Name + "-" + strconv.Itoa(ordinal)
}

func claimName(set *appsv1.StatefulSet, tpl *corev1.PersistentVolumeClaim, ordinal int) string {
	return tpl.Name + "-" + set.Name + "-" + strconv.Itoa(ordinal)
}

// identityMatches reports whether pod has set's identity for its ordinal.
func identityMatches(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	parent, o := parentAndOrdinal(pod.Name)
	return o >= 0 && parent == set.Name && pod.Namespace == set.Namespace &&
		pod.Labels[appsv1.StatefulSetPodNameLabel] == pod.Name
}

// storageMatches reports whether pod's volumes name its claims.
func storageMatches(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	o := ordinalOf(pod)
	if o < 0 {
		return false
	}
	vols := make(map[string]*corev1.Volume, len(pod.Spec.Volumes))
	for i := range pod.Spec.Volumes {
		vols[pod.Spec.Volumes[i].Name] = &pod.Spec.Volumes[i]
	}
	for i := range set.Spec.VolumeClaimTemplates {
		tpl := &set.Spec.VolumeClaimTemplates[i]
		v := vols[tpl.Name]
		if v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claimName(set, tpl, o) {
			return false
		}
	}
	return true
}

// updateIdentity gives pod set's name, namespace and identity labels.
func updateIdentity(set *appsv1.StatefulSet, pod *corev1.Pod) {
	o := ordinalOf(pod)
	pod.Name, pod.Namespace = podName(set, o), set.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.StatefulSetPodNameLabel] = pod.Name
	pod.Labels[appsv1.PodIndexLabel] = strconv.Itoa(o)
}

// updateStorage points pod's volumes named like a claim template at the
// claims of its ordinal (claims first, in template order, then the
// others).
func updateStorage(set *appsv1.StatefulSet, pod *corev1.Pod) {
	o := ordinalOf(pod)
	tpls := set.Spec.VolumeClaimTemplates
	named := make(map[string]bool, len(tpls))
	vols := make([]corev1.Volume, 0, len(tpls)+len(pod.Spec.Volumes))
	for i := range tpls {
		named[tpls[i].Name] = true
		vols = append(vols, corev1.Volume{Name: tpls[i].Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(set, &tpls[i], o)}}})
	}
	for _, v := range pod.Spec.Volumes {
		if !named[v.Name] {
			vols = append(vols, v)
		}
	}
	pod.Spec.Volumes = vols
}

// newPod is set's pod of ordinal at revision (set's template is the
// revision's).
func newPod(set *appsv1.StatefulSet, ordinal int, revision string) *corev1.Pod {
	pod := workload.PodFromTemplate(&set.Spec.Template, set, kind, "")
	pod.Name = podName(set, ordinal)
	updateIdentity(set, pod)
	pod.Spec.Hostname, pod.Spec.Subdomain = pod.Name, set.Spec.ServiceName
	updateStorage(set, pod)
	pod.Labels[appsv1.StatefulSetRevisionLabel] = revision
	return pod
}

// newVersionedPod is the pod of ordinal: at the current revision below
// the rolling update's partition, at the update revision otherwise.
func newVersionedPod(current, update *appsv1.StatefulSet, currentRev, updateRev string, ordinal int) *corev1.Pod {
	st := current.Spec.UpdateStrategy
	if st.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
		(st.RollingUpdate == nil && ordinal < startOrdinal(current)+int(current.Status.CurrentReplicas)) ||
		(st.RollingUpdate != nil && st.RollingUpdate.Partition != nil && ordinal < startOrdinal(current)+int(*st.RollingUpdate.Partition)) {
		return newPod(current, ordinal, currentRev)
	}
	return newPod(update, ordinal, updateRev)
}

func revisionOf(pod *corev1.Pod) string { return pod.Labels[appsv1.StatefulSetRevisionLabel] }

// Pod states as kube's StatefulSet controller sees them.

func isCreated(pod *corev1.Pod) bool     { return pod.Status.Phase != "" }
func isPending(pod *corev1.Pod) bool     { return pod.Status.Phase == corev1.PodPending }
func isTerminating(pod *corev1.Pod) bool { return pod.DeletionTimestamp != nil }
func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
}

func isRunningAndReady(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning && workload.IsReady(pod)
}

func isAvailable(pod *corev1.Pod, minReady int32, now time.Time) bool {
	return workload.IsAvailable(pod, minReady, now)
}

func isUnavailable(pod *corev1.Pod, minReady int32, now time.Time) bool {
	return !isAvailable(pod, minReady, now) || isTerminating(pod)
}
