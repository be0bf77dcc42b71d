package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/litek8s/litek8s/internal/api/registry"
)

func TestPrefixFromUserAgent(t *testing.T) {
	for ua, want := range map[string]string{
		"golden-curl/1.0": "golden-curl",
		"kubectl/v1.32.0 (linux/amd64) kubernetes/x": "kubectl",
		"curl":                   "curl",
		"":                       "",
		"bad\x01agent/1":         "badagent",
		strings.Repeat("a", 200): strings.Repeat("a", 128),
	} {
		if got := prefixFromUserAgent(ua); got != want {
			t.Errorf("prefixFromUserAgent(%q) = %q, want %q", ua, got, want)
		}
	}
}

func TestGenerateName(t *testing.T) {
	if n := generateName("web-"); len(n) != 9 || !strings.HasPrefix(n, "web-") {
		t.Errorf("generateName(web-) = %q", n)
	}
	if n := generateName(strings.Repeat("x", 70)); len(n) != 63 {
		t.Errorf("a long generateName gives %d characters, want 63", len(n))
	}
}

func TestGCFinalizers(t *testing.T) {
	orphan, fg, bg := metav1.DeletePropagationOrphan, metav1.DeletePropagationForeground, metav1.DeletePropagationBackground
	for _, c := range []struct {
		name     string
		have     []string
		opts     metav1.DeleteOptions
		changed  bool
		finalize []string
	}{
		{"none", nil, metav1.DeleteOptions{}, false, nil},
		{"background", []string{"a"}, metav1.DeleteOptions{PropagationPolicy: &bg}, false, []string{"a"}},
		{"orphan", []string{"a"}, metav1.DeleteOptions{PropagationPolicy: &orphan}, true, []string{"a", "orphan"}},
		{"foreground", nil, metav1.DeleteOptions{PropagationPolicy: &fg}, true, []string{"foregroundDeletion"}},
		{"background drops orphan", []string{"orphan", "a"}, metav1.DeleteOptions{PropagationPolicy: &bg}, true, []string{"a"}},
		{"kept without a policy", []string{"orphan"}, metav1.DeleteOptions{}, false, []string{"orphan"}},
		{"orphanDependents=false", nil, metav1.DeleteOptions{OrphanDependents: ptr.To(false)}, true, []string{"foregroundDeletion"}},
	} {
		m := &metav1.ObjectMeta{Finalizers: c.have}
		changed, got := gcFinalizers(m, &c.opts)
		if changed != c.changed || strings.Join(got, ",") != strings.Join(c.finalize, ",") {
			t.Errorf("%s: %v %v, want %v %v", c.name, changed, got, c.changed, c.finalize)
		}
	}
}

func TestBeforeDeletePod(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	pods := &registry.Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}
	pod := func(node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: 1},
			Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: ptr.To[int64](30)}}
	}
	// Bound: graceful, 30 s, generation bumped.
	p := pod("n1")
	opts := &metav1.DeleteOptions{}
	graceful, pending := beforeDelete(pods, p, p, opts, now)
	if !graceful || pending || *opts.GracePeriodSeconds != 30 || !p.DeletionTimestamp.Time.Equal(now.Add(30*time.Second)) ||
		*p.DeletionGracePeriodSeconds != 30 || p.Generation != 2 {
		t.Fatalf("bound pod: graceful=%v pending=%v %v %+v", graceful, pending, *opts.GracePeriodSeconds, p.ObjectMeta)
	}
	// Again without a grace period: pending, nothing changes.
	opts = &metav1.DeleteOptions{}
	if graceful, pending = beforeDelete(pods, p, p, opts, now); graceful || !pending {
		t.Errorf("second delete: graceful=%v pending=%v", graceful, pending)
	}
	// Again with a shorter one: shortened.
	opts = &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](5)}
	if graceful, pending = beforeDelete(pods, p, p, opts, now); !graceful || pending ||
		!p.DeletionTimestamp.Time.Equal(now.Add(5*time.Second)) || *p.DeletionGracePeriodSeconds != 5 {
		t.Errorf("shorter grace: graceful=%v pending=%v %+v", graceful, pending, p.ObjectMeta)
	}
	// Not bound: at once.
	p = pod("")
	opts = &metav1.DeleteOptions{}
	if graceful, _ = beforeDelete(pods, p, p, opts, now); !graceful || *opts.GracePeriodSeconds != 0 {
		t.Errorf("unbound pod: graceful=%v grace=%v", graceful, *opts.GracePeriodSeconds)
	}
	// Other kinds are not deleted gracefully.
	cm := &corev1.ConfigMap{}
	if graceful, pending = beforeDelete(&registry.Resource{Resource: "configmaps"}, cm, cm, &metav1.DeleteOptions{}, now); graceful || pending {
		t.Errorf("configmap: graceful=%v pending=%v", graceful, pending)
	}
}

func TestMarkAsDeleting(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	m := &metav1.ObjectMeta{Generation: 3}
	markAsDeleting(m, now)
	markAsDeleting(m, now.Add(time.Minute)) // a later mark keeps the first time and generation
	if m.Generation != 4 || !m.DeletionTimestamp.Time.Equal(now) || *m.DeletionGracePeriodSeconds != 0 {
		t.Errorf("%+v", m)
	}
}

func TestShouldDeleteDuringUpdate(t *testing.T) {
	ts := metav1.Now()
	marked := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &ts, DeletionGracePeriodSeconds: ptr.To[int64](0),
		Finalizers: []string{"x"}}}
	cms := &registry.Resource{Resource: "configmaps"}
	if !shouldDeleteDuringUpdate(cms, &corev1.ConfigMap{}, marked) {
		t.Error("last finalizer removed from a marked object: not deleted")
	}
	if shouldDeleteDuringUpdate(cms, marked, marked) {
		t.Error("finalizers left: deleted")
	}
	if shouldDeleteDuringUpdate(cms, &corev1.ConfigMap{}, &corev1.ConfigMap{}) {
		t.Error("not marked: deleted")
	}
	graceful := marked.DeepCopy()
	graceful.DeletionGracePeriodSeconds = ptr.To[int64](30)
	if shouldDeleteDuringUpdate(cms, &corev1.ConfigMap{}, graceful) {
		t.Error("grace period left: deleted")
	}
	ns := &corev1.Namespace{ObjectMeta: marked.ObjectMeta, Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}}}
	if shouldDeleteDuringUpdate(&registry.Resource{Resource: "namespaces"}, &corev1.Namespace{Spec: ns.Spec}, ns) {
		t.Error("namespace with spec.finalizers: deleted")
	}
}

func TestGenerationChanged(t *testing.T) {
	builtin := &registry.Resource{Status: true}
	base := `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"d","generation":1},"spec":{"replicas":1},"status":{}}`
	for _, c := range []struct {
		name string
		res  *registry.Resource
		raw  string
		want bool
	}{
		{"same", builtin, base, false},
		{"metadata", builtin, strings.Replace(base, `"name":"d"`, `"name":"d","labels":{"a":"b"}`, 1), false},
		{"status", builtin, strings.Replace(base, `"status":{}`, `"status":{"replicas":2}`, 1), false},
		{"spec", builtin, strings.Replace(base, `"replicas":1`, `"replicas":2`, 1), true},
		{"custom, status subresource", &registry.Resource{Custom: true, Status: true}, strings.Replace(base, `"status":{}`, `"status":{"x":1}`, 1), false},
		{"custom, no status subresource", &registry.Resource{Custom: true}, strings.Replace(base, `"status":{}`, `"status":{"x":1}`, 1), true},
		{"custom, other field", &registry.Resource{Custom: true, Status: true}, strings.Replace(base, `"status":{}`, `"status":{},"data":1`, 1), true},
	} {
		if got := generationChanged(c.res, []byte(c.raw), []byte(base)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestStatusOnly(t *testing.T) {
	old := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", ResourceVersion: "5", Labels: map[string]string{"a": "1"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)}}
	req := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{"a": "2"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](9)}, Status: appsv1.DeploymentStatus{Replicas: 3}}
	out := statusOnly(old, req).(*appsv1.Deployment)
	if *out.Spec.Replicas != 1 || out.Labels["a"] != "1" || out.Status.Replicas != 3 || out.ManagedFields[0].Manager != "m" ||
		out.ResourceVersion != "" {
		t.Errorf("typed: %+v", out)
	}
	uold := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(1)},
		"status": map[string]any{"phase": "Old"}}}
	ureq := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(2)},
		"status": map[string]any{"phase": "New"}}}
	uout := statusOnly(uold, ureq).(*unstructured.Unstructured)
	if uout.Object["spec"].(map[string]any)["size"] != int64(1) || uout.Object["status"].(map[string]any)["phase"] != "New" {
		t.Errorf("unstructured: %v", uout.Object)
	}
	delete(ureq.Object, "status")
	if _, ok := statusOnly(uold, ureq).(*unstructured.Unstructured).Object["status"]; ok {
		t.Error("a status update without status keeps the old status")
	}
}

func TestScaleOf(t *testing.T) {
	deploy := &registry.Resource{Scale: &registry.ScaleSpec{SpecReplicas: ".spec.replicas", StatusReplicas: ".status.replicas", LabelSelector: ".spec.selector"}}
	raw := `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"d","namespace":"n","uid":"u","resourceVersion":"7",` +
		`"creationTimestamp":"2026-11-30T09:57:26Z"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"d"}}},"status":{"replicas":3}}`
	sc, err := scaleOf(deploy, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(sc)
	want := `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"d","namespace":"n","uid":"u","resourceVersion":"7",` +
		`"creationTimestamp":"2026-11-30T09:57:26Z"},"spec":{"replicas":2},"status":{"replicas":3,"selector":"app=d"}}`
	if string(b) != want {
		t.Errorf("scale\n%s\nwant\n%s", b, want)
	}
	custom := &registry.Resource{Scale: &registry.ScaleSpec{SpecReplicas: ".spec.size", StatusReplicas: ".status.size", LabelSelector: ".status.selector"}}
	sc, err = scaleOf(custom, []byte(`{"metadata":{"name":"w"},"spec":{"size":4},"status":{"selector":"a=b"}}`))
	if err != nil || sc.Spec.Replicas != 4 || sc.Status.Replicas != 0 || sc.Status.Selector != "a=b" {
		t.Errorf("custom scale: %+v %v", sc, err)
	}
	sc, err = scaleOf(&registry.Resource{Scale: registry.New(registry.Builtin()).Lookup("v1", "replicationcontrollers").Scale}, []byte(`{"metadata":{"name":"rc"},"spec":{"replicas":1,"selector":{"b":"2","a":"1"}}}`))
	if err != nil || sc.Status.Selector != "a=1,b=2" {
		t.Errorf("rc scale: %+v %v", sc, err)
	}
}

func TestWithReplicas(t *testing.T) {
	res := &registry.Resource{Group: "apps", Version: "v1", Kind: "Deployment", New: registry.NewOf[appsv1.Deployment](),
		Scale: &registry.ScaleSpec{SpecReplicas: ".spec.replicas"}}
	out, err := withReplicas(res, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, 5)
	if err != nil || *out.(*appsv1.Deployment).Spec.Replicas != 5 || out.(*appsv1.Deployment).Name != "d" {
		t.Errorf("typed: %+v %v", out, err)
	}
	cr := &registry.Resource{Scale: &registry.ScaleSpec{SpecReplicas: ".spec.size"}}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	uo, err := withReplicas(cr, u, 3)
	if err != nil || uo.(*unstructured.Unstructured).Object["spec"].(map[string]any)["size"] != int64(3) || len(u.Object["spec"].(map[string]any)) != 0 {
		t.Errorf("unstructured: %v %v", uo, err)
	}
}

func TestSameManagedFieldsButTimes(t *testing.T) {
	t1, t2 := metav1.NewTime(time.Unix(1, 0)), metav1.NewTime(time.Unix(2, 0))
	e := func(m string, tm *metav1.Time) []metav1.ManagedFieldsEntry {
		return []metav1.ManagedFieldsEntry{{Manager: m, Operation: metav1.ManagedFieldsOperationUpdate, Time: tm}}
	}
	if !sameManagedFieldsButTimes(&metav1.ObjectMeta{ManagedFields: e("a", &t2)}, &metav1.ObjectMeta{ManagedFields: e("a", &t1)}) {
		t.Error("a time change alone is not recognized")
	}
	if sameManagedFieldsButTimes(&metav1.ObjectMeta{ManagedFields: e("b", &t2)}, &metav1.ObjectMeta{ManagedFields: e("a", &t1)}) {
		t.Error("another manager is taken for a time change")
	}
}

func TestPatchTypeOf(t *testing.T) {
	custom := &registry.Resource{Custom: true}
	if _, err := patchTypeOf("application/strategic-merge-patch+json", custom); err != errCustomPatchMediaType {
		t.Errorf("strategic merge on a custom resource: %v", err)
	}
	if _, err := patchTypeOf("application/json", &registry.Resource{}); err != errPatchMediaType {
		t.Errorf("application/json: %v", err)
	}
	if pt, err := patchTypeOf("application/apply-patch+yaml; charset=utf-8", &registry.Resource{}); err != nil || pt != "application/apply-patch+yaml" {
		t.Errorf("apply: %v %v", pt, err)
	}
}

func TestNamespaceGCFinalizers(t *testing.T) {
	orphan := metav1.DeletePropagationOrphan
	if got := namespaceGCFinalizers(nil, &metav1.DeleteOptions{PropagationPolicy: &orphan}); strings.Join(got, ",") != "orphan" {
		t.Errorf("orphan: %v", got)
	}
	if got := namespaceGCFinalizers([]string{"x"}, &metav1.DeleteOptions{}); strings.Join(got, ",") != "x" {
		t.Errorf("no policy: %v", got)
	}
}

func TestRowConvertor(t *testing.T) {
	res := &registry.Resource{Group: "apps", Version: "v1", Kind: "Deployment", New: registry.NewOf[appsv1.Deployment]()}
	c := &rowConvertor{gvk: res.GVK(), newObj: res.New}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "d"}, "spec": map[string]any{"replicas": int64(2)}}}
	out, err := c.ConvertToVersion(u, res.GVK().GroupVersion())
	if d, ok := out.(*appsv1.Deployment); err != nil || !ok || d.Name != "d" || *d.Spec.Replicas != 2 || d.Kind != "Deployment" {
		t.Errorf("unstructured to typed: %#v %v", out, err)
	}
	var _ runtime.ObjectConvertor = c
}

// The cost managedFields add to a write (decode of the stored object is
// separate): one FieldManager.Update of a Deployment and of a ConfigMap.
func BenchmarkTrackUpdate(b *testing.B) {
	s, err := New(func() Config { c := DefaultConfig(); c.Token = "t"; return c }(), nil)
	if err != nil {
		b.Fatal(err)
	}
	deploy := s.registry().Lookup("apps/v1", "deployments")
	cms := s.registry().Lookup("v1", "configmaps")
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "n", Labels: map[string]string{"app": "d"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x:1",
					Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP"}}}}}}}}
	d.SetGroupVersionKind(deploy.GVK())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "n"}, Data: map[string]string{"a": "1", "b": "2"}}
	cm.SetGroupVersionKind(cms.GVK())
	for _, c := range []struct {
		name string
		res  *registry.Resource
		obj  runtime.Object
	}{{"deployment", deploy, d}, {"configmap", cms, cm}} {
		live, err := s.trackUpdate(c.res, "", emptyObject(c.res), c.obj.DeepCopyObject(), "creator")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.trackUpdate(c.res, "", live, live.DeepCopyObject(), "editor"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
