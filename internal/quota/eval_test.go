package quota

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func pod(requests, limits corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}}}}
}

func TestUsage(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	grace := int64(30)
	gone := pod(list("cpu", "1"), nil)
	gone.DeletionTimestamp, gone.DeletionGracePeriodSeconds = &metav1.Time{Time: now.Add(-time.Minute)}, &grace
	leaving := pod(list("cpu", "1"), nil)
	leaving.DeletionTimestamp, leaving.DeletionGracePeriodSeconds = &metav1.Time{Time: now}, &grace
	done := pod(list("cpu", "1"), nil)
	done.Status.Phase = corev1.PodSucceeded
	withInit := pod(list("cpu", "500m"), nil)
	withInit.Spec.InitContainers = []corev1.Container{{Name: "i", Resources: corev1.ResourceRequirements{Requests: list("cpu", "2")}}}
	f := false
	class := "gold"
	cases := []struct {
		name     string
		resource string
		obj      runtime.Object
		want     corev1.ResourceList
	}{
		{"pod with requests, limits and an extended resource", Pods,
			pod(list("cpu", "500m", "memory", "252Mi", "ephemeral-storage", "30Gi", "example.com/dongle", "2"), list("example.com/dongle", "2", "memory", "1Gi")),
			list("count/pods", "1", "pods", "1", "cpu", "500m", "requests.cpu", "500m", "memory", "252Mi", "requests.memory", "252Mi",
				"limits.memory", "1Gi", "ephemeral-storage", "30Gi", "requests.ephemeral-storage", "30Gi", "requests.example.com/dongle", "2")},
		{"init container larger than the containers", Pods, withInit,
			list("count/pods", "1", "pods", "1", "cpu", "2", "requests.cpu", "2")},
		{"best effort pod", Pods, pod(nil, nil), list("count/pods", "1", "pods", "1")},
		{"terminal pod counts as an object only", Pods, done, list("count/pods", "1")},
		{"pod deleted past its grace period", Pods, gone, list("count/pods", "1")},
		{"pod within its grace period", Pods, leaving, list("count/pods", "1", "pods", "1", "cpu", "1", "requests.cpu", "1")},
		{"cluster IP service", Services, &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}},
			list("count/services", "1", "services", "1", "services.nodeports", "0", "services.loadbalancers", "0")},
		{"node port service", Services, &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}, {Port: 81}}}},
			list("count/services", "1", "services", "1", "services.nodeports", "2", "services.loadbalancers", "0")},
		{"load balancer", Services, &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}}},
			list("count/services", "1", "services", "1", "services.nodeports", "1", "services.loadbalancers", "1")},
		{"load balancer without node ports", Services, &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			AllocateLoadBalancerNodePorts: &f, Ports: []corev1.ServicePort{{Port: 80}, {Port: 81, NodePort: 30001}}}},
			list("count/services", "1", "services", "1", "services.nodeports", "1", "services.loadbalancers", "1")},
		{"claim of a class", Claims, &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class,
			Resources: corev1.VolumeResourceRequirements{Requests: list("storage", "1Gi")}}},
			list("count/persistentvolumeclaims", "1", "persistentvolumeclaims", "1", "requests.storage", "1Gi",
				"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "gold.storageclass.storage.k8s.io/requests.storage", "1Gi")},
		{"secret", "secrets", &metav1.PartialObjectMetadata{}, list("count/secrets", "1", "secrets", "1")},
		{"replica set", "replicasets.apps", &metav1.PartialObjectMetadata{}, list("count/replicasets.apps", "1")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Usage(c.resource, c.obj, now); !Equal(got, c.want) {
				t.Errorf("Usage = %s, want %s", String(got), String(c.want))
			}
		})
	}
}

func TestResourceOf(t *testing.T) {
	for name, want := range map[corev1.ResourceName]string{
		"pods": Pods, "cpu": Pods, "requests.memory": Pods, "limits.cpu": Pods, "requests.example.com/dongle": Pods,
		"hugepages-2Mi": Pods, "requests.storage": Claims, "gold.storageclass.storage.k8s.io/requests.storage": Claims,
		"services.nodeports": Services, "secrets": "secrets", "resourcequotas": "resourcequotas",
		"count/replicasets.apps": "replicasets.apps", "count/widgets.example.com": "widgets.example.com", "nonsense": "",
		"requests.nvidia.com/gpu": Pods,
	} {
		if got := ResourceOf(name); got != want {
			t.Errorf("ResourceOf(%s) = %q, want %q", name, got, want)
		}
	}
}

func TestMatches(t *testing.T) {
	deadline := int64(60)
	term := pod(list("cpu", "1"), nil)
	term.Spec.ActiveDeadlineSeconds = &deadline
	scoped := func(s corev1.ResourceQuotaScope) *corev1.ResourceQuota {
		return &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Scopes: []corev1.ResourceQuotaScope{s}}}
	}
	pc := &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
		{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}}}}}
	high := pod(nil, nil)
	high.Spec.PriorityClassName = "high"
	hard := list("pods", "5", "services", "2")
	cases := []struct {
		name     string
		q        *corev1.ResourceQuota
		resource string
		obj      runtime.Object
		want     bool
	}{
		{"unscoped quota, pod", &corev1.ResourceQuota{}, Pods, pod(nil, nil), true},
		{"quota that limits nothing of the resource", &corev1.ResourceQuota{}, "secrets", &metav1.PartialObjectMetadata{}, false},
		{"terminating scope, long-running pod", scoped(corev1.ResourceQuotaScopeTerminating), Pods, pod(nil, nil), false},
		{"terminating scope, pod with a deadline", scoped(corev1.ResourceQuotaScopeTerminating), Pods, term, true},
		{"not terminating scope, pod with a deadline", scoped(corev1.ResourceQuotaScopeNotTerminating), Pods, term, false},
		{"best effort scope, best effort pod", scoped(corev1.ResourceQuotaScopeBestEffort), Pods, pod(nil, nil), true},
		{"best effort scope, burstable pod", scoped(corev1.ResourceQuotaScopeBestEffort), Pods, term, false},
		{"not best effort scope, burstable pod", scoped(corev1.ResourceQuotaScopeNotBestEffort), Pods, term, true},
		{"scoped quota, service", scoped(corev1.ResourceQuotaScopeBestEffort), Services, &corev1.Service{}, false},
		{"priority class in", pc, Pods, high, true},
		{"priority class not in", pc, Pods, pod(nil, nil), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Matches(c.q, hard, c.resource, c.obj); got != c.want {
				t.Errorf("Matches = %v, want %v", got, c.want)
			}
		})
	}
}

func TestConstraints(t *testing.T) {
	p := pod(list("cpu", "1"), nil)
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "b"})
	err := Constraints(p, []corev1.ResourceName{"pods", "requests.cpu", "limits.memory"})
	if want := "must specify limits.memory for: b,c; requests.cpu for: b"; err == nil || err.Error() != want {
		t.Errorf("Constraints = %v, want %q", err, want)
	}
	if err := Constraints(p, []corev1.ResourceName{"pods", "requests.storage"}); err != nil {
		t.Errorf("Constraints on resources nothing must state = %v", err)
	}
}

func TestListArithmetic(t *testing.T) {
	if got := String(Add(list("cpu", "500m", "pods", "1"), list("cpu", "600m"))); got != "cpu=1100m,pods=1" {
		t.Errorf("Add = %s", got)
	}
	if got := String(SubtractNonNegative(list("cpu", "1", "memory", "1Gi"), list("cpu", "2", "memory", "512Mi"))); got != "cpu=0,memory=512Mi" {
		t.Errorf("SubtractNonNegative = %s", got)
	}
	if got := Exceeded(list("cpu", "1100m", "pods", "1", "secrets", "9"), list("cpu", "1", "pods", "1")); len(got) != 1 || got[0] != "cpu" {
		t.Errorf("Exceeded = %v", got)
	}
	if got := String(RemoveZeros(list("cpu", "0", "pods", "1"))); got != "pods=1" {
		t.Errorf("RemoveZeros = %s", got)
	}
}
