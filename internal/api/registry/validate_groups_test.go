package registry

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// otherGroupValidateCases are the TestValidate cases of the groups other
// than core, apps and batch.
func otherGroupValidateCases() []validateCase {
	rb := func(t *testing.T) *rbacv1.RoleBinding {
		return goldenObject[rbacv1.RoleBinding](t, "objects/rolebinding-post.json")
	}
	crb := func(t *testing.T) *rbacv1.ClusterRoleBinding {
		return goldenObject[rbacv1.ClusterRoleBinding](t, "objects/clusterrolebinding-post.json")
	}
	pc := func(t *testing.T) *schedulingv1.PriorityClass {
		return goldenObject[schedulingv1.PriorityClass](t, "objects/priorityclass-post.json")
	}
	sc := func(t *testing.T) *storagev1.StorageClass {
		return goldenObject[storagev1.StorageClass](t, "objects/storageclass-post.json")
	}
	pdb := func(t *testing.T) *policyv1.PodDisruptionBudget {
		return goldenObject[policyv1.PodDisruptionBudget](t, "objects/pdb-post.json")
	}
	hpa := func(t *testing.T) *autoscalingv2.HorizontalPodAutoscaler {
		return goldenObject[autoscalingv2.HorizontalPodAutoscaler](t, "objects/hpa-post.json")
	}
	ing := func(t *testing.T) *networkingv1.Ingress {
		return goldenObject[networkingv1.Ingress](t, "objects/ingress-post.json")
	}
	eps := func(t *testing.T) *discoveryv1.EndpointSlice {
		return goldenObject[discoveryv1.EndpointSlice](t, "objects/endpointslice-post.json")
	}
	const rbacG, netG = "rbac.authorization.k8s.io/v1", "networking.k8s.io/v1"
	return []validateCase{
		{name: "rolebinding roleRef immutable", gv: rbacG, res: "rolebindings",
			obj: func(t *testing.T) runtime.Object {
				b := rb(t)
				b.RoleRef.Name = "other"
				return b
			}, old: func(t *testing.T) runtime.Object { return rb(t) },
			want: []string{"roleRef: Invalid value"}},
		{name: "rolebinding bad subject", gv: rbacG, res: "rolebindings",
			obj: func(t *testing.T) runtime.Object {
				b := rb(t)
				b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: "Robot"}, rbacv1.Subject{Kind: "User", Name: "u"})
				return b
			}, want: []string{"subjects[2].name: Required value", "subjects[2].kind: Unsupported value",
				"subjects[3].apiGroup: Unsupported value"}},
		{name: "clusterrolebinding to a Role", gv: rbacG, res: "clusterrolebindings",
			obj: func(t *testing.T) runtime.Object {
				b := crb(t)
				b.RoleRef.Kind = "Role"
				b.Subjects[1].Namespace = ""
				return b
			}, want: []string{"roleRef.kind: Unsupported value", "subjects[1].namespace: Required value"}},
		{name: "priorityclass value immutable", gv: "scheduling.k8s.io/v1", res: "priorityclasses",
			obj: func(t *testing.T) runtime.Object {
				p := pc(t)
				p.Value = 5
				return p
			}, old: func(t *testing.T) runtime.Object { return pc(t) },
			want: []string{"value: Forbidden"}},
		{name: "priorityclass too high", gv: "scheduling.k8s.io/v1", res: "priorityclasses",
			obj: func(t *testing.T) runtime.Object {
				p := pc(t)
				p.Value = 2000000000
				return p
			}, want: []string{"value: Forbidden"}},
		{name: "storageclass parameters immutable", gv: "storage.k8s.io/v1", res: "storageclasses",
			obj: func(t *testing.T) runtime.Object {
				s := sc(t)
				s.Parameters["type"] = "real"
				return s
			}, old: func(t *testing.T) runtime.Object { return sc(t) },
			want: []string{"parameters: Invalid value"}},
		{name: "storageclass without provisioner", gv: "storage.k8s.io/v1", res: "storageclasses",
			obj: func(t *testing.T) runtime.Object {
				s := sc(t)
				s.Provisioner = ""
				return s
			}, want: []string{"provisioner: Required value"}},
		{name: "pdb both bounds, over 100%", gv: "policy/v1", res: "poddisruptionbudgets",
			obj: func(t *testing.T) runtime.Object {
				p := pdb(t)
				v := intstr.FromString("150%")
				p.Spec.MaxUnavailable = &v
				return p
			}, want: []string{"spec: Invalid value", "spec.maxUnavailable: Invalid value"}},
		{name: "hpa max below min", gv: "autoscaling/v2", res: "horizontalpodautoscalers",
			obj: func(t *testing.T) runtime.Object {
				h := hpa(t)
				*h.Spec.MinReplicas = 5
				h.Spec.ScaleTargetRef.Name = ""
				return h
			}, want: []string{"spec.maxReplicas: Invalid value", "spec.scaleTargetRef.name: Required value"}},
		{name: "ingress without rules", gv: netG, res: "ingresses",
			obj: func(t *testing.T) runtime.Object {
				i := ing(t)
				i.Spec.Rules = nil
				return i
			}, want: []string{"spec: Invalid value"}},
		{name: "ingress path without type or port", gv: netG, res: "ingresses",
			obj: func(t *testing.T) runtime.Object {
				i := ing(t)
				p := i.Spec.Rules[0].HTTP.Paths[0]
				p.Backend.Service.Port.Number = 0
				i.Spec.Rules[0].HTTP.Paths = append(i.Spec.Rules[0].HTTP.Paths, p)
				i.Spec.Rules[0].HTTP.Paths[0].PathType = nil
				return i
			}, want: []string{"spec.rules[0].http.paths[0].pathType: Required value",
				"spec.rules[0].http.paths[1].backend: Required value"}},
		{name: "ingressclass controller immutable", gv: netG, res: "ingressclasses",
			obj: func(t *testing.T) runtime.Object {
				return &networkingv1.IngressClass{Spec: networkingv1.IngressClassSpec{Controller: "example.com/b"}}
			}, old: func(t *testing.T) runtime.Object {
				return &networkingv1.IngressClass{Spec: networkingv1.IngressClassSpec{Controller: "example.com/a"}}
			}, want: []string{"spec.controller: Invalid value"}},
		{name: "endpointslice address type immutable", gv: "discovery.k8s.io/v1", res: "endpointslices",
			obj: func(t *testing.T) runtime.Object {
				e := eps(t)
				e.AddressType = discoveryv1.AddressTypeIPv6
				e.Endpoints = append(e.Endpoints, discoveryv1.Endpoint{})
				return e
			}, old: func(t *testing.T) runtime.Object { return eps(t) },
			want: []string{"addressType: Invalid value", "endpoints[1].addresses: Required value"}},
	}
}
