package registry

import (
	"encoding/json"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestDefaultsGolden replays the create requests of the golden captures
// through the registry's Normalize and Prepare, as admitCreate runs them
// (with kube's uid and creationTimestamp), and compares the object with
// the one kube stored and answered (objects/<kind>-post.json, without
// managedFields and resourceVersion).
func TestDefaultsGolden(t *testing.T) {
	reg := New(Builtin())
	tests := []struct{ name, groupVersion, resource string }{
		{"namespace", "v1", "namespaces"},
		{"configmap", "v1", "configmaps"},
		{"secret", "v1", "secrets"},
		{"serviceaccount", "v1", "serviceaccounts"},
		{"event", "v1", "events"},
		{"endpoints", "v1", "endpoints"},
		{"pvc", "v1", "persistentvolumeclaims"},
		{"deployment", "apps/v1", "deployments"},
		{"statefulset", "apps/v1", "statefulsets"},
		{"daemonset", "apps/v1", "daemonsets"},
		{"job", "batch/v1", "jobs"},
		{"cronjob", "batch/v1", "cronjobs"},
		{"endpointslice", "discovery.k8s.io/v1", "endpointslices"},
		{"pdb", "policy/v1", "poddisruptionbudgets"},
		{"ingress", "networking.k8s.io/v1", "ingresses"},
		{"networkpolicy", "networking.k8s.io/v1", "networkpolicies"},
		{"hpa", "autoscaling/v2", "horizontalpodautoscalers"},
		{"priorityclass", "scheduling.k8s.io/v1", "priorityclasses"},
		{"storageclass", "storage.k8s.io/v1", "storageclasses"},
		{"role", "rbac.authorization.k8s.io/v1", "roles"},
		{"rolebinding", "rbac.authorization.k8s.io/v1", "rolebindings"},
		{"clusterrole", "rbac.authorization.k8s.io/v1", "clusterroles"},
		{"clusterrolebinding", "rbac.authorization.k8s.io/v1", "clusterrolebindings"},
		{"lease", "coordination.k8s.io/v1", "leases"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := reg.Lookup(tt.groupVersion, tt.resource)
			if r == nil {
				t.Fatalf("%s %s not in the registry", tt.groupVersion, tt.resource)
			}
			want := r.New()
			mustUnmarshal(t, readGolden(t, "objects/"+tt.name+"-post.json"), want)
			wm, _ := apimeta.Accessor(want)
			wm.SetManagedFields(nil)
			wm.SetResourceVersion("")

			got := r.New()
			mustUnmarshal(t, readGolden(t, "objects/"+tt.name+"-post.req.json"), got)
			admitForTest(r, got, wm)
			if errs := validateForTest(r, got, nil); len(errs) > 0 {
				t.Errorf("the golden request does not validate: %v", errs)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if string(gb) != string(wb) {
				t.Errorf("created object differs from kube's\n got: %s\nwant: %s", gb, wb)
			}
			if r.Normalize != nil { // defaults run on every write: a second run changes nothing
				r.Normalize(got)
				if again, _ := json.Marshal(got); string(again) != string(gb) {
					t.Errorf("Normalize is not idempotent\nonce: %s\ntwice: %s", gb, again)
				}
			}
		})
	}
}

// admitForTest does to obj what admitCreate does on create: generic
// metadata (namespace, uid and creationTimestamp taken from kube's answer
// like), then the row's Normalize and Prepare.
func admitForTest(r *Resource, obj runtime.Object, like metav1.Object) {
	m, _ := apimeta.Accessor(obj)
	if r.Namespaced {
		m.SetNamespace(like.GetNamespace())
	}
	m.SetUID(like.GetUID())
	m.SetCreationTimestamp(like.GetCreationTimestamp())
	if r.HasGeneration {
		m.SetGeneration(1)
	}
	if r.Normalize != nil {
		r.Normalize(obj)
	}
	if r.Prepare != nil {
		r.Prepare(obj)
	}
}

// validateForTest runs the row's Validate, if any.
func validateForTest(r *Resource, obj, old runtime.Object) field.ErrorList {
	if r.Validate == nil {
		return nil
	}
	return r.Validate(obj, old)
}

func mustUnmarshal(t *testing.T, b []byte, obj any) {
	t.Helper()
	if err := json.Unmarshal(b, obj); err != nil {
		t.Fatal(err)
	}
}
