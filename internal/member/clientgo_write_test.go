package member_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// The write path through client-go, on a 3-member cluster with every
// request sent to a follower (forwarded to the leader): what controllers
// and operators do, where there is no golden capture.

// followerClient returns a clientset of a follower and the warnings the
// server sent it.
func followerClient(t *testing.T, c *membertest.Cluster) (*kubernetes.Clientset, *warningRecorder) {
	t.Helper()
	cfg := restConfig(t, c, c.Follower())
	rec := &warningRecorder{}
	cfg.WarningHandler = rec
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, rec
}

type warningRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningRecorder) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	w.msgs = append(w.msgs, text)
	w.mu.Unlock()
}

func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.msgs
	w.msgs = nil
	return m
}

var _ rest.WarningHandler = (*warningRecorder)(nil)

func createNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// An informer sees a pod go Terminating (MODIFIED with deletionTimestamp),
// and stays so after its grace period ends, then DELETED on the kubelet's
// final DELETE with gracePeriodSeconds=0; an unbound pod goes at once.
func TestClientGoPodDeletion(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	cs, _ := followerClient(t, c)
	ctx := t.Context()
	createNamespace(t, cs, "gc")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/x:1"}}}}
	if _, err := cs.CoreV1().Pods("gc").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods("gc").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := cs.CoreV1().Pods("gc").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Target: corev1.ObjectReference{Kind: "Node", Name: "n2"}}, metav1.CreateOptions{})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `pod p is already assigned to node "n1"`) {
		t.Errorf("second binding: %v, want a Conflict", err)
	}
	bound, err := cs.CoreV1().Pods("gc").Get(ctx, "p", metav1.GetOptions{})
	if err != nil || bound.Spec.NodeName != "n1" || len(bound.Status.Conditions) != 1 ||
		bound.Status.Conditions[0].Type != corev1.PodScheduled || bound.Generation != 1 {
		t.Fatalf("bound pod: %+v %v", bound, err)
	}

	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("gc"))
	type ev struct {
		typ         string
		terminating bool
	}
	events := make(chan ev, 16)
	inf := f.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, o any) { events <- ev{"MODIFIED", o.(*corev1.Pod).DeletionTimestamp != nil} },
		DeleteFunc: func(o any) { events <- ev{"DELETED", false} },
	}); err != nil {
		t.Fatal(err)
	}
	ictx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); f.Shutdown() }()
	f.Start(ictx.Done())
	if !cache.WaitForCacheSync(ictx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	if err := cs.CoreV1().Pods("gc").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}); err != nil {
		t.Fatal(err)
	}
	next := func() ev {
		select {
		case e := <-events:
			return e
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
		}
		return ev{}
	}
	// MODIFIED (Terminating, grace 1 s); nothing more when the grace period
	// ends (no kubelet confirmed)...
	if e := next(); e != (ev{"MODIFIED", true}) {
		t.Errorf("first event %+v, want the pod Terminating", e)
	}
	select {
	case e := <-events:
		t.Errorf("event %+v after the grace period, want none before the kubelet's delete", e)
	case <-time.After(2500 * time.Millisecond):
	}
	if p, err := cs.CoreV1().Pods("gc").Get(ctx, "p", metav1.GetOptions{}); err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("pod after its grace period: %v %v, want it Terminating", p, err)
	}
	// ...until the kubelet's final delete: maybe MODIFIED (the grace period
	// cut to 0), then DELETED.
	if err := cs.CoreV1().Pods("gc").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	for e := next(); e.typ != "DELETED"; e = next() {
		if e != (ev{"MODIFIED", true}) {
			t.Fatalf("event %+v, want the pod Terminating, then DELETED", e)
		}
	}

	// Unbound: deleted at once; the answer is the pod (kube returns it).
	if _, err := cs.CoreV1().Pods("gc").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods("gc").Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("gc").Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("unbound pod after DELETE: %v, want NotFound", err)
	}
}

// kubectl delete ns: the namespace is Terminating at once, creates into
// it are Forbidden, and an informer sees it go.
func TestClientGoNamespaceDeletion(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	cs, _ := followerClient(t, c)
	ctx := t.Context()
	createNamespace(t, cs, "doomed")
	for i := range 5 {
		if _, err := cs.CoreV1().ConfigMaps("doomed").Create(ctx, configMap(fmt.Sprintf("cm-%d", i), nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := cs.CoreV1().ConfigMaps("doomed").Create(ctx, configMap("late", nil), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) {
		t.Errorf("create into a deleted namespace: %v, want Forbidden (or NotFound once gone)", err)
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		if _, err := cs.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace still there: %v", err)
		}
		return nil
	})
	l, err := cs.CoreV1().ConfigMaps("doomed").List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 0 {
		t.Errorf("objects left in the deleted namespace: %v %v", l, err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, "kube-system", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("deleting kube-system: %v, want Forbidden", err)
	}
}

// Server-side apply with client-go's apply configurations: create,
// ownership, conflicts, force; managedFields on every write.
func TestClientGoServerSideApply(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	cs, _ := followerClient(t, c)
	ctx := t.Context()
	createNamespace(t, cs, "ssa")
	cm := corev1ac.ConfigMap("app", "ssa").WithData(map[string]string{"a": "1"})
	got, err := cs.CoreV1().ConfigMaps("ssa").Apply(ctx, cm, metav1.ApplyOptions{FieldManager: "one"})
	if err != nil || got.Data["a"] != "1" || len(got.ManagedFields) != 1 || got.ManagedFields[0].Manager != "one" ||
		got.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("apply create: %+v %v", got, err)
	}
	// Another manager changing a field "one" owns: conflict, unless forced.
	other := corev1ac.ConfigMap("app", "ssa").WithData(map[string]string{"a": "2"})
	_, err = cs.CoreV1().ConfigMaps("ssa").Apply(ctx, other, metav1.ApplyOptions{FieldManager: "two"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `Apply failed with 1 conflict: conflict with "one": .data.a`) {
		t.Fatalf("conflicting apply: %v", err)
	}
	got, err = cs.CoreV1().ConfigMaps("ssa").Apply(ctx, other, metav1.ApplyOptions{FieldManager: "two", Force: true})
	if err != nil || got.Data["a"] != "2" {
		t.Fatalf("forced apply: %+v %v", got, err)
	}
	// "one" stops applying a: it is removed only if nobody else owns it.
	got, err = cs.CoreV1().ConfigMaps("ssa").Apply(ctx, corev1ac.ConfigMap("app", "ssa").WithData(map[string]string{"b": "1"}),
		metav1.ApplyOptions{FieldManager: "one"})
	if err != nil || got.Data["a"] != "2" || got.Data["b"] != "1" {
		t.Fatalf("apply of another field: %+v %v", got, err)
	}
	// An update by a non-apply client gets an Update entry (manager from
	// the User-Agent when no fieldManager is given).
	got.Data["c"] = "1"
	got, err = cs.CoreV1().ConfigMaps("ssa").Update(ctx, got, metav1.UpdateOptions{FieldManager: "editor"})
	if err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, e := range got.ManagedFields {
		managers = append(managers, e.Manager+"/"+string(e.Operation))
	}
	// kube sorts entries by operation (Apply first), then time, then
	// manager: "one" applied last, so it follows "two" when its apply fell
	// in a later second than two's.
	if m := strings.Join(managers, ","); m != "one/Apply,two/Apply,editor/Update" && m != "two/Apply,one/Apply,editor/Update" {
		t.Errorf("managers %v", managers)
	}
	// A deployment: apply owns the container image; a scale through the
	// subresource moves spec.replicas to the scaler.
	dep := appsv1ac.Deployment("web", "ssa").WithSpec(appsv1ac.DeploymentSpec().WithReplicas(1).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "web"})).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "web"}).
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("web").WithImage("registry.invalid/web:1")))))
	if _, err := cs.AppsV1().Deployments("ssa").Apply(ctx, dep, metav1.ApplyOptions{FieldManager: "deployer"}); err != nil {
		t.Fatal(err)
	}
	sc, err := cs.AppsV1().Deployments("ssa").UpdateScale(ctx, "web", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv1.ScaleSpec{Replicas: 4}}, metav1.UpdateOptions{FieldManager: "scaler"})
	if err != nil || sc.Spec.Replicas != 4 || sc.Status.Selector != "app=web" {
		t.Fatalf("scale: %+v %v", sc, err)
	}
	d, err := cs.AppsV1().Deployments("ssa").Get(ctx, "web", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 4 || d.Generation != 2 {
		t.Fatalf("after scale: %+v %v", d, err)
	}
	var scaler *metav1.ManagedFieldsEntry
	for i, e := range d.ManagedFields {
		if e.Manager == "scaler" {
			scaler = &d.ManagedFields[i]
		}
	}
	if scaler == nil || scaler.Subresource != "scale" || string(scaler.FieldsV1.Raw) != `{"f:spec":{"f:replicas":{}}}` {
		t.Errorf("scaler entry: %+v", scaler)
	}
	// Re-applying the old replicas by "deployer" conflicts with the scaler.
	_, err = cs.AppsV1().Deployments("ssa").Apply(ctx, dep, metav1.ApplyOptions{FieldManager: "deployer"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "scaler" with subresource "scale" using apps/v1: .spec.replicas`) {
		t.Errorf("apply after scale: %v", err)
	}
}

// Status: a status update changes status only; a main-resource update
// keeps the stored status; generation counts spec changes. (A StatefulSet
// with its controller off: nothing else writes its status.)
func TestClientGoStatusSubresource(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft, func(cfg *member.Config) { cfg.Controllers.Disabled = []string{"statefulset"} })
	cs, _ := followerClient(t, c)
	ctx := t.Context()
	createNamespace(t, cs, "st")
	d := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.StatefulSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/x:1"}}}}}}
	d, err := cs.AppsV1().StatefulSets("st").Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status.Replicas, d.Status.ObservedGeneration = 5, 1
	d.Spec.Replicas = ptr.To[int32](9) // ignored by a status update
	d, err = cs.AppsV1().StatefulSets("st").UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil || d.Status.Replicas != 5 || *d.Spec.Replicas != 1 || d.Generation != 1 {
		t.Fatalf("status update: %+v %v", d, err)
	}
	d.Status.Replicas = 0 // ignored by a main-resource update
	d.Spec.Replicas = ptr.To[int32](2)
	d, err = cs.AppsV1().StatefulSets("st").Update(ctx, d, metav1.UpdateOptions{})
	if err != nil || d.Status.Replicas != 5 || *d.Spec.Replicas != 2 || d.Generation != 2 {
		t.Fatalf("update: %+v %v", d, err)
	}
	// A label change is no spec change.
	d, err = cs.AppsV1().StatefulSets("st").Patch(ctx, "d", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	if err != nil || d.Generation != 2 {
		t.Fatalf("label patch: generation %d %v", d.Generation, err)
	}
	var entries []string
	for _, e := range d.ManagedFields {
		entries = append(entries, e.Manager+"/"+e.Subresource)
	}
	// kube sorts Update entries by time to the second, then manager,
	// then subresource: the later main-resource update may come second.
	slices.Sort(entries)
	if len(entries) != 2 || !strings.HasSuffix(entries[0], "/") || !strings.HasSuffix(entries[1], "/status") {
		t.Errorf("managedFields %v, want the client's Update and its status Update", entries)
	}
}

// fieldValidation on patches, dry runs, generateName, deletecollection and
// finalizers through client-go.
func TestClientGoWriteOptions(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	cs, warns := followerClient(t, c)
	ctx := t.Context()
	createNamespace(t, cs, "opts")
	cms := cs.CoreV1().ConfigMaps("opts")
	if _, err := cms.Create(ctx, configMap("cm", map[string]string{"a": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"data":{"b":"2"},"spec":{"x":1}}`)
	if _, err := cms.Patch(ctx, "cm", types.MergePatchType, patch, metav1.PatchOptions{FieldValidation: "Warn"}); err != nil {
		t.Fatal(err)
	}
	if w := warns.take(); len(w) != 1 || w[0] != `unknown field "spec"` {
		t.Errorf("warnings %q, want unknown field \"spec\"", w)
	}
	_, err := cms.Patch(ctx, "cm", types.MergePatchType, patch, metav1.PatchOptions{FieldValidation: "Strict"})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `strict decoding error: unknown field "spec"`) {
		t.Errorf("strict patch: %v", err)
	}
	_, err = cms.Patch(ctx, "cm", types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldValidation: "Strict"})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `unknown field "spec"`) {
		t.Errorf("strict strategic patch: %v", err)
	}
	if _, err := cms.Patch(ctx, "cm", types.MergePatchType, patch, metav1.PatchOptions{FieldValidation: "Ignore"}); err != nil ||
		len(warns.take()) != 0 {
		t.Errorf("ignored unknown field: %v", err)
	}

	// Dry runs store nothing.
	before, _ := cms.Get(ctx, "cm", metav1.GetOptions{})
	if _, err := cms.Patch(ctx, "cm", types.MergePatchType, []byte(`{"data":{"dry":"1"}}`), metav1.PatchOptions{DryRun: []string{"All"}}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "cm", metav1.DeleteOptions{DryRun: []string{"All"}}); err != nil {
		t.Fatal(err)
	}
	after, err := cms.Get(ctx, "cm", metav1.GetOptions{})
	if err != nil || after.ResourceVersion != before.ResourceVersion {
		t.Errorf("after dry runs: %+v %v", after, err)
	}

	// generateName.
	gen, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-",
		Labels: map[string]string{"batch": "x"}}}, metav1.CreateOptions{})
	if err != nil || !strings.HasPrefix(gen.Name, "gen-") || len(gen.Name) != 9 {
		t.Fatalf("generateName: %+v %v", gen, err)
	}
	// Finalizers: the DELETE marks, the update removing the last one deletes.
	held, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"x/y"},
		Labels: map[string]string{"batch": "x"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// deletecollection: held is marked, gen goes.
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: labels.Set{"batch": "x"}.String()}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, gen.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after deletecollection: %v", err)
	}
	held, err = cms.Get(ctx, "held", metav1.GetOptions{})
	if err != nil || held.DeletionTimestamp == nil {
		t.Fatalf("held: %+v %v", held, err)
	}
	held.Finalizers = append(held.Finalizers, "new/one")
	if _, err := cms.Update(ctx, held, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("adding a finalizer while deleting: %v, want Invalid", err)
	}
	held.Finalizers = nil
	if _, err := cms.Update(ctx, held, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "held", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after removing the last finalizer: %v", err)
	}
	// Metadata that may not change on update.
	cur, _ := cms.Get(ctx, "cm", metav1.GetOptions{})
	_, err = cms.Patch(ctx, "cm", types.MergePatchType, []byte(`{"metadata":{"uid":"00000000-0000-0000-0000-000000000000"}}`), metav1.PatchOptions{})
	var se *apierrors.StatusError
	if !errors.As(err, &se) || !apierrors.IsInvalid(err) || se.ErrStatus.Details.Causes[0].Field != "metadata.uid" {
		t.Errorf("uid patch: %v", err)
	}
	if cur.UID == "" {
		t.Error("no uid")
	}
	// A write relayed by a follower carries the leader's warnings only
	// once (Endpoints: kube's deprecation warning).
	warns.take()
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ep"}}
	if _, err := cs.CoreV1().Endpoints("opts").Create(ctx, ep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if w := warns.take(); len(w) != 1 || !strings.HasPrefix(w[0], "v1 Endpoints is deprecated") {
		t.Errorf("warnings of a forwarded Endpoints create: %q, want kube's one deprecation warning", w)
	}
}

const gadgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.writes.litek8s.io
spec:
  group: writes.litek8s.io
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
              color: {type: string}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
`

// Custom resources through the write path: status and scale
// subresources, generation, server-side apply and finalizers work on
// unstructured objects as on built-in ones.
func TestClientGoCustomResourceWrites(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	cfg := restConfig(t, c, c.Follower())
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := followerClient(t, c)
	ctx := t.Context()
	createNamespace(t, cs, "cr")
	crds := dc.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(ctx, unstructuredOf(t, gadgetCRD), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gadgets := dc.Resource(schema.GroupVersionResource{Group: "writes.litek8s.io", Version: "v1", Resource: "gadgets"}).Namespace("cr")
	g := unstructuredOf(t, `{"apiVersion":"writes.litek8s.io/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"replicas":1,"color":"red"},"status":{"replicas":7}}`)
	var got *unstructured.Unstructured
	membertest.Eventually(t, 10*time.Second, func() error { // served once the CRD is applied
		got, err = gadgets.Create(ctx, g, metav1.CreateOptions{FieldManager: "maker"})
		return err
	})
	if _, ok := got.Object["status"]; ok || got.GetGeneration() != 1 || len(got.GetManagedFields()) != 1 {
		t.Fatalf("create: status kept or no managedFields: %v", got.Object)
	}
	// Status: only status changes, no generation bump.
	got.Object["status"] = map[string]any{"replicas": int64(1), "selector": "app=g"}
	got.Object["spec"].(map[string]any)["color"] = "ignored"
	got, err = gadgets.UpdateStatus(ctx, got, metav1.UpdateOptions{FieldManager: "ctrl"})
	if err != nil || got.GetGeneration() != 1 || got.Object["spec"].(map[string]any)["color"] != "red" {
		t.Fatalf("status update: %v %v", got, err)
	}
	// Scale.
	sc := &unstructured.Unstructured{}
	if err := cs.RESTClient().Get().AbsPath("/apis/writes.litek8s.io/v1/namespaces/cr/gadgets/g/scale").Do(ctx).Into(sc); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(sc.Object, "spec", "replicas"); r != 1 || sc.Object["status"].(map[string]any)["selector"] != "app=g" {
		t.Errorf("scale: %v", sc.Object)
	}
	if _, err := gadgets.Patch(ctx, "g", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{FieldManager: "scaler"}, "scale"); err != nil {
		t.Fatal(err)
	}
	got, err = gadgets.Get(ctx, "g", metav1.GetOptions{})
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); err != nil || r != 3 || got.GetGeneration() != 2 {
		t.Fatalf("after scale: %v %v", got, err)
	}
	// Apply by another manager of a field "maker" set: conflict.
	ap := []byte(`{"apiVersion":"writes.litek8s.io/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"color":"blue"}}`)
	_, err = gadgets.Patch(ctx, "g", types.ApplyPatchType, ap, metav1.PatchOptions{FieldManager: "applier"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "maker" using writes.litek8s.io/v1: .spec.color`) {
		t.Errorf("apply: %v", err)
	}
	if got, err = gadgets.Patch(ctx, "g", types.ApplyPatchType, ap, metav1.PatchOptions{FieldManager: "applier", Force: ptr.To(true)}); err != nil ||
		got.Object["spec"].(map[string]any)["color"] != "blue" || got.GetGeneration() != 3 {
		t.Fatalf("forced apply: %v %v", got, err)
	}
	// Strategic merge patches are refused for custom resources.
	_, err = gadgets.Patch(ctx, "g", types.StrategicMergePatchType, []byte(`{}`), metav1.PatchOptions{})
	if !apierrors.IsUnsupportedMediaType(err) {
		t.Errorf("strategic merge patch: %v", err)
	}
}

func unstructuredOf(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}
