package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// The garbage collector against real clusters of 1 and 3 members, driven
// with client-go like a user would (objects created through a follower
// when there is one). Each case also counts the collector's DELETE calls:
// one per object that had to go, none twice.
func TestGarbageCollector(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d members", n), func(t *testing.T) {
			f := newFixture(t, membertest.StartCluster(t, n))
			t.Run("background", f.testBackground)
			t.Run("foreground chain", f.testForegroundChain)
			t.Run("orphan", f.testOrphan)
			t.Run("custom resources", f.testCustomResources)
			t.Run("cluster-scoped owners", f.testClusterScoped)
			f.noResyncs(t)
		})
	}
}

// testBackground: an owner deleted in the background takes its dependents
// along, except those with another owner that still exists; a dependent
// whose owner never existed (or lives in another namespace) goes too.
func (f *fixture) testBackground(t *testing.T) {
	ns := f.namespace(t, "gc-bg")
	other := f.namespace(t, "gc-bg-other")
	deletes := f.gcDeletes()
	owner := f.configMap(t, ns, "owner")
	keeper := f.configMap(t, ns, "keeper")
	f.configMap(t, ns, "dep-1", cmRef(owner))
	f.configMap(t, ns, "dep-2", ref("v1", "ConfigMap", owner, false))
	f.configMap(t, ns, "two-owners", cmRef(owner), cmRef(keeper))
	sec, err := f.cs.CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "dep-secret", OwnerReferences: []metav1.OwnerReference{cmRef(owner)}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := f.cs.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "dep-pod", OwnerReferences: []metav1.OwnerReference{cmRef(owner)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// An owner in another namespace is no owner: the reference dangles.
	elsewhere := f.configMap(t, other, "owner")
	f.configMap(t, ns, "cross-namespace", cmRef(elsewhere))
	// A uid nobody has.
	f.configMap(t, ns, "never-owned", metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "ghost",
		UID: types.UID("00000000-0000-0000-0000-000000000000")})

	waitGone(t, "never-owned", f.getCM(ns, "never-owned"))
	waitGone(t, "cross-namespace", f.getCM(ns, "cross-namespace"))
	membertest.MustStay(t, "dep-1 (its owner exists)", f.getCM(ns, "dep-1"))

	bg := metav1.DeletePropagationBackground
	if err := f.cs.CoreV1().ConfigMaps(ns).Delete(t.Context(), "owner", metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"owner", "dep-1", "dep-2"} {
		waitGone(t, name, f.getCM(ns, name))
	}
	waitGone(t, "dep-secret", func(ctx context.Context) error {
		_, err := f.cs.CoreV1().Secrets(ns).Get(ctx, sec.Name, metav1.GetOptions{})
		return err
	})
	waitGone(t, "dep-pod", func(ctx context.Context) error {
		_, err := f.cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		return err
	})
	// The dependent with a surviving owner stays and loses the reference
	// to the one that went.
	membertest.Eventually(t, 10*time.Second, func() error {
		cm, err := f.cs.CoreV1().ConfigMaps(ns).Get(t.Context(), "two-owners", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != keeper.UID {
			return fmt.Errorf("two-owners has ownerReferences %v, want only keeper's", cm.OwnerReferences)
		}
		return nil
	})
	membertest.MustStay(t, "keeper", f.getCM(ns, "keeper"))
	membertest.MustStay(t, "the owner in the other namespace", f.getCM(other, "owner"))
	// Nothing deleted twice: one DELETE per object that had to go.
	if got := f.gcDeletes() - deletes; got != 6 {
		t.Errorf("the garbage collector deleted %d objects, want 6 (never-owned, cross-namespace, dep-1, dep-2, dep-secret, dep-pod)", got)
	}
}

// testForegroundChain: a Deployment deleted in the foreground waits for
// its ReplicaSet, deleted in the foreground in turn (it has dependents),
// which waits for its pods.
func (f *fixture) testForegroundChain(t *testing.T) {
	ns := f.namespace(t, "gc-fg")
	rec := f.record(t, ns, deploymentsGVR, replicasetsGVR, podsGVR)
	deletes := f.gcDeletes()
	f.deploymentChain(t, ns, "web", 3)
	fg := metav1.DeletePropagationForeground
	if err := f.cs.AppsV1().Deployments(ns).Delete(t.Context(), "web", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "deployment web", func(ctx context.Context) error {
		_, err := f.cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		return err
	})
	var evs []recorded
	membertest.Eventually(t, 10*time.Second, func() error {
		evs = rec.sorted()
		if deletedAt(t, evs, "Deployment", "web") == 0 {
			return errors.New("no DELETED event of the deployment yet")
		}
		return nil
	})
	dep, rs := deletedAt(t, evs, "Deployment", "web"), deletedAt(t, evs, "ReplicaSet", "web-rs")
	var lastPod int64
	for i := range 3 {
		at := deletedAt(t, evs, "Pod", fmt.Sprintf("web-pod-%d", i))
		if at == 0 {
			t.Errorf("pod web-pod-%d never deleted", i)
		}
		lastPod = max(lastPod, at)
	}
	if !(lastPod < rs && rs < dep) {
		t.Errorf("deletions out of order: last pod at %d, replicaset at %d, deployment at %d\n%s", lastPod, rs, dep, dump(evs))
	}
	// The ReplicaSet was deleted in the foreground itself: it waited with
	// the foregroundDeletion finalizer for its pods.
	waited := false
	for _, e := range evs {
		if e.kind == "ReplicaSet" && e.typ == watch.Modified && e.deleting &&
			slices.Contains(e.finalizers, metav1.FinalizerDeleteDependents) && e.rv < lastPod {
			waited = true
		}
	}
	if !waited {
		t.Errorf("the ReplicaSet was not deleted in the foreground\n%s", dump(evs))
	}
	if got := f.gcDeletes() - deletes; got != 4 {
		t.Errorf("the garbage collector deleted %d objects, want 4 (the replicaset, 3 pods)", got)
	}
}

// testOrphan: an owner deleted with orphan propagation goes once its
// dependents no longer reference it; they stay, with their other owners.
func (f *fixture) testOrphan(t *testing.T) {
	ns := f.namespace(t, "gc-orphan")
	deletes := f.gcDeletes()
	owner := f.configMap(t, ns, "owner")
	keeper := f.configMap(t, ns, "keeper")
	f.configMap(t, ns, "dep-1", cmRef(owner))
	f.configMap(t, ns, "dep-2", cmRef(keeper), cmRef(owner))
	orphan := metav1.DeletePropagationOrphan
	if err := f.cs.CoreV1().ConfigMaps(ns).Delete(t.Context(), "owner", metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "owner", f.getCM(ns, "owner"))
	want := map[string][]types.UID{"dep-1": nil, "dep-2": {keeper.UID}}
	for name, uids := range want {
		cm, err := f.cs.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []types.UID
		for _, r := range cm.OwnerReferences {
			got = append(got, r.UID)
		}
		if !slices.Equal(got, uids) {
			t.Errorf("%s: owners %v, want %v", name, got, uids)
		}
	}
	membertest.MustStay(t, "dep-1", f.getCM(ns, "dep-1"))
	if got := f.gcDeletes() - deletes; got != 0 {
		t.Errorf("the garbage collector deleted %d objects, want none", got)
	}
}

var widgetsGVR = schema.GroupVersionResource{Group: "gc.example.com", Version: "v1", Resource: "widgets"}

// testCustomResources: owners and dependents of a CRD created while the
// collector runs.
func (f *fixture) testCustomResources(t *testing.T) {
	ns := f.namespace(t, "gc-crd")
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.gc.example.com"},
		"spec": map[string]any{"group": "gc.example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object",
					"x-kubernetes-preserve-unknown-fields": true}}}}}}}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := f.dyn.Resource(crdGVR).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	widget := func(name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "gc.example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": name}}}
		u.SetOwnerReferences(owners)
		var out *unstructured.Unstructured
		membertest.Eventually(t, 10*time.Second, func() (err error) {
			out, err = f.dyn.Resource(widgetsGVR).Namespace(ns).Create(t.Context(), u, metav1.CreateOptions{})
			return err
		})
		return out
	}
	getWidget := func(name string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := f.dyn.Resource(widgetsGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
			return err
		}
	}
	owner := widget("owner")
	f.configMap(t, ns, "cm-of-widget", ref("gc.example.com/v1", "Widget", owner, true))
	cmOwner := f.configMap(t, ns, "cm-owner")
	widget("widget-of-cm", cmRef(cmOwner))
	membertest.MustStay(t, "cm-of-widget", f.getCM(ns, "cm-of-widget"))

	if err := f.dyn.Resource(widgetsGVR).Namespace(ns).Delete(t.Context(), "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "cm-of-widget", f.getCM(ns, "cm-of-widget"))
	if err := f.cs.CoreV1().ConfigMaps(ns).Delete(t.Context(), "cm-owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "widget-of-cm", getWidget("widget-of-cm"))

	// Foreground through a custom resource: a widget owning a ConfigMap
	// held by a finalizer waits for it.
	owner = widget("fg-owner")
	held := f.configMap(t, ns, "held", ref("gc.example.com/v1", "Widget", owner, true))
	held.Finalizers = []string{"gc.example.com/hold"}
	if _, err := f.cs.CoreV1().ConfigMaps(ns).Update(t.Context(), held, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	fg := metav1.DeletePropagationForeground
	if err := f.dyn.Resource(widgetsGVR).Namespace(ns).Delete(t.Context(), "fg-owner", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		cm, err := f.cs.CoreV1().ConfigMaps(ns).Get(t.Context(), "held", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.DeletionTimestamp == nil {
			return errors.New("held is not being deleted yet")
		}
		return nil
	})
	membertest.MustStay(t, "fg-owner (waits for held)", getWidget("fg-owner"))
	if _, err := f.cs.CoreV1().ConfigMaps(ns).Patch(t.Context(), "held", types.JSONPatchType,
		[]byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "fg-owner", getWidget("fg-owner"))
}

// testClusterScoped: a cluster-scoped owner of namespaced dependents; a
// cluster-scoped object cannot have a namespaced owner (never collected).
func (f *fixture) testClusterScoped(t *testing.T) {
	ns := f.namespace(t, "gc-cluster")
	cr, err := f.cs.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gc-owner"}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.configMap(t, ns, "dep", ref("rbac.authorization.k8s.io/v1", "ClusterRole", cr, true))
	nsOwner := f.configMap(t, ns, "namespaced-owner")
	_, err = f.cs.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{
		Name: "gc-invalid-dep", OwnerReferences: []metav1.OwnerReference{cmRef(nsOwner)}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	membertest.MustStay(t, "dep", f.getCM(ns, "dep"))
	if err := f.cs.RbacV1().ClusterRoles().Delete(t.Context(), "gc-owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "dep", f.getCM(ns, "dep"))
	if err := f.cs.CoreV1().ConfigMaps(ns).Delete(t.Context(), "namespaced-owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.MustStay(t, "a cluster-scoped dependent of a namespaced owner", func(ctx context.Context) error {
		_, err := f.cs.RbacV1().ClusterRoles().Get(ctx, "gc-invalid-dep", metav1.GetOptions{})
		return err
	})
}
