package registry

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Defaults of apps/v1 StatefulSets and DaemonSets (Deployments and
// ReplicaSets are in defaults.go).

// daemonSetTemplateGeneration is the annotation through which apps/v1
// carries a DaemonSet's template generation.
const daemonSetTemplateGeneration = "deprecated.daemonset.template.generation"

// prepareStatefulSet: a create cannot set status.
func prepareStatefulSet(obj runtime.Object) {
	obj.(*appsv1.StatefulSet).Status = appsv1.StatefulSetStatus{}
}

// defaultStatefulSet: OrderedReady pods, rolling updates from partition 0
// one pod at a time (MaxUnavailableStatefulSet is on in 1.37), claims
// retained, 1 replica, 10 revisions.
func defaultStatefulSet(obj runtime.Object) {
	sts := obj.(*appsv1.StatefulSet)
	sp := &sts.Spec
	defaultString(&sp.PodManagementPolicy, appsv1.OrderedReadyPodManagement)
	if sp.UpdateStrategy.Type == "" {
		sp.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if sp.UpdateStrategy.RollingUpdate == nil {
			sp.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if ru := sp.UpdateStrategy.RollingUpdate; sp.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && ru != nil {
		ru.Partition = defaultInt32(ru.Partition, 0)
		ru.MaxUnavailable = defaultPtr(ru.MaxUnavailable, intstr.FromInt32(1))
	}
	if sp.PersistentVolumeClaimRetentionPolicy == nil {
		sp.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	defaultString(&sp.PersistentVolumeClaimRetentionPolicy.WhenDeleted, appsv1.RetainPersistentVolumeClaimRetentionPolicyType)
	defaultString(&sp.PersistentVolumeClaimRetentionPolicy.WhenScaled, appsv1.RetainPersistentVolumeClaimRetentionPolicyType)
	sp.Replicas = defaultInt32(sp.Replicas, 1)
	sp.RevisionHistoryLimit = defaultInt32(sp.RevisionHistoryLimit, 10)
	defaultPodSpec(&sp.Template.Spec)
	for i := range sp.VolumeClaimTemplates {
		pvc := &sp.VolumeClaimTemplates[i]
		pvc.Spec.VolumeMode = defaultPtr(pvc.Spec.VolumeMode, "Filesystem")
		defaultString(&pvc.Status.Phase, "Pending")
	}
}

// prepareDaemonSet: a create cannot set status, and starts the template
// generation at 1.
func prepareDaemonSet(obj runtime.Object) {
	ds := obj.(*appsv1.DaemonSet)
	ds.Status = appsv1.DaemonSetStatus{}
	if g, err := strconv.ParseInt(ds.Annotations[daemonSetTemplateGeneration], 10, 64); err != nil || g < 1 {
		setTemplateGeneration(ds, "1")
	}
}

// prepareDaemonSetUpdate: the template generation is the stored one, bumped
// when the template changed (kube's daemonset strategy), whatever the
// writer sent; the controller tells old pods by it.
func prepareDaemonSetUpdate(obj, old runtime.Object) {
	ds, ods := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
	g, err := strconv.ParseInt(ods.Annotations[daemonSetTemplateGeneration], 10, 64)
	if err != nil || g < 1 {
		g = 1
	}
	if !apiequality.Semantic.DeepEqual(ds.Spec.Template, ods.Spec.Template) {
		g++
	}
	setTemplateGeneration(ds, strconv.FormatInt(g, 10))
}

// defaultDaemonSet: rolling updates of one node at a time without surge,
// 10 revisions. A DaemonSet always carries its template generation: kube
// writes the annotation whenever it converts the object (so the writer
// owns it in managedFields); when a write leaves it out, litek8s puts 1
// (kube would keep the stored generation, bumped if the template changed:
// that needs the stored object, which defaults do not see).
func defaultDaemonSet(obj runtime.Object) {
	ds := obj.(*appsv1.DaemonSet)
	if _, ok := ds.Annotations[daemonSetTemplateGeneration]; !ok {
		setTemplateGeneration(ds, "1")
	}
	sp := &ds.Spec
	defaultString(&sp.UpdateStrategy.Type, appsv1.RollingUpdateDaemonSetStrategyType)
	if sp.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if sp.UpdateStrategy.RollingUpdate == nil {
			sp.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		ru := sp.UpdateStrategy.RollingUpdate
		ru.MaxUnavailable = defaultPtr(ru.MaxUnavailable, intstr.FromInt32(1))
		ru.MaxSurge = defaultPtr(ru.MaxSurge, intstr.FromInt32(0))
	}
	sp.RevisionHistoryLimit = defaultInt32(sp.RevisionHistoryLimit, 10)
	defaultPodSpec(&sp.Template.Spec)
}

func setTemplateGeneration(ds *appsv1.DaemonSet, g string) {
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	ds.Annotations[daemonSetTemplateGeneration] = g
}
