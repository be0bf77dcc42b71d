package namespace_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

var (
	crdGVR     = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gadgetsGVR = schema.GroupVersionResource{Group: "ns.example.com", Version: "v1", Resource: "gadgets"}
)

// fastDeletion shortens the wait before a namespace being deleted is
// processed.
func fastDeletion(c *member.Config) {
	c.Controllers.Cluster.Namespace.DeletionDelay = 100 * time.Millisecond
}

// A namespace being deleted is emptied (pods, configmaps, secrets, a
// claim a pod uses, a custom resource), stays while an object with a finalizer remains, with
// kube's conditions saying so, and goes once that finalizer is removed; a
// namespace with nothing in it goes at once. Run on 3 members, through a
// follower.
func TestNamespaceDeletion(t *testing.T) {
	c := membertest.StartCluster(t, 3, fastDeletion)
	rc := c.RESTConfig(c.Follower())
	rc.WrapTransport = membertest.RetryUnavailable
	cs := kubernetes.NewForConfigOrDie(rc)
	dyn := dynamic.NewForConfigOrDie(rc)
	ctx := t.Context()

	createCRD(t, dyn)
	mustCreateNS(t, cs, "doomed")
	mustCreateNS(t, cs, "bystander")
	for _, ns := range []string{"doomed", "bystander"} {
		for i := range 3 {
			mustCreate(t, "configmap", func() error {
				_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
					Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{})
				return err
			})
		}
		mustCreate(t, "secret", func() error {
			_, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"},
				StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{})
			return err
		})
		// A claim (held by kubernetes.io/pvc-protection while a pod uses it)
		// and a pod on a node using it: deleted gracefully, the pod would
		// stay 30 s.
		mustCreate(t, "claim", func() error {
			_, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse("1Gi")}}}}, metav1.CreateOptions{})
			return err
		})
		mustCreate(t, "pod", func() error {
			_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
				Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
					Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}},
				metav1.CreateOptions{})
			return err
		})
		mustCreate(t, "gadget", func() error {
			_, err := dyn.Resource(gadgetsGVR).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "ns.example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g"}}},
				metav1.CreateOptions{})
			return err
		})
	}
	mustCreate(t, "held configmap", func() error {
		_, err := cs.CoreV1().ConfigMaps("doomed").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "held", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{})
		return err
	})
	// A pod already terminating gracefully is not waited for either.
	if err := cs.CoreV1().Pods("doomed").Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := cs.CoreV1().Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Everything goes but the held configmap, and the conditions say why
	// the namespace stays.
	membertest.Eventually(t, 20*time.Second, func() error {
		var left []string
		cms, err := cs.CoreV1().ConfigMaps("doomed").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, cm := range cms.Items {
			if cm.Name != "held" {
				left = append(left, "configmap "+cm.Name)
			}
		}
		if l, err := cs.CoreV1().Secrets("doomed").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) > 0 {
			left = append(left, fmt.Sprintf("secrets (%v)", err))
		}
		if l, err := cs.CoreV1().Pods("doomed").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) > 0 {
			left = append(left, fmt.Sprintf("pods (%v)", err))
		}
		if l, err := cs.CoreV1().PersistentVolumeClaims("doomed").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) > 0 {
			left = append(left, fmt.Sprintf("claims (%v)", err))
		}
		if l, err := dyn.Resource(gadgetsGVR).Namespace("doomed").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) > 0 {
			left = append(left, fmt.Sprintf("gadgets (%v)", err))
		}
		if len(left) > 0 {
			return fmt.Errorf("still there: %s", strings.Join(left, ", "))
		}
		ns, err := cs.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
		if err != nil {
			return err
		}
		return checkConditions(ns, map[corev1.NamespaceConditionType]string{
			corev1.NamespaceDeletionDiscoveryFailure: "False ResourcesDiscovered All resources successfully discovered",
			corev1.NamespaceDeletionGVParsingFailure: "False ParsedGroupVersions All legacy kube types successfully parsed",
			corev1.NamespaceDeletionContentFailure:   "False ContentDeleted All content successfully deleted, may be waiting on finalization",
			corev1.NamespaceContentRemaining:         "True SomeResourcesRemain Some resources are remaining: configmaps. has 1 resource instances",
			corev1.NamespaceFinalizersRemaining:      "True SomeFinalizersRemain Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances",
		})
	})
	held, err := cs.CoreV1().ConfigMaps("doomed").Get(ctx, "held", metav1.GetOptions{})
	if err != nil || held.DeletionTimestamp == nil {
		t.Fatalf("held configmap: %v (deletionTimestamp %v), want it Terminating", err, held.GetDeletionTimestamp())
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
	if err != nil || ns.Status.Phase != corev1.NamespaceTerminating || len(ns.Spec.Finalizers) != 1 {
		t.Fatalf("namespace while content remains: %v %+v, want Terminating with its finalizer", err, ns)
	}

	if _, err := cs.CoreV1().ConfigMaps("doomed").Patch(ctx, "held", "application/merge-patch+json",
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "namespace doomed", func() error {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
		return err
	})

	// The other namespace kept everything.
	for what, list := range map[string]func() (int, error){
		"configmaps": func() (int, error) {
			l, err := cs.CoreV1().ConfigMaps("bystander").List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		"pods": func() (int, error) {
			l, err := cs.CoreV1().Pods("bystander").List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		"gadgets": func() (int, error) {
			l, err := dyn.Resource(gadgetsGVR).Namespace("bystander").List(ctx, metav1.ListOptions{})
			if err != nil {
				return 0, err
			}
			return len(l.Items), nil
		},
	} {
		n, err := list()
		if err != nil || n == 0 {
			t.Errorf("bystander %s: %d (%v), want them kept", what, n, err)
		}
	}

	// An empty namespace goes at once (after the deletion delay).
	mustCreateNS(t, cs, "empty")
	start := time.Now()
	if err := cs.CoreV1().Namespaces().Delete(ctx, "empty", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "namespace empty", func() error {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "empty", metav1.GetOptions{})
		return err
	})
	t.Logf("empty namespace deleted in %v", time.Since(start))
	c.SameObjects(ctx, "/api/v1/namespaces", "/api/v1/configmaps", "/api/v1/pods")
}

// checkConditions compares ns's conditions of the given types with
// "Status Reason Message".
func checkConditions(ns *corev1.Namespace, want map[corev1.NamespaceConditionType]string) error {
	var errs []error
	for typ, w := range want {
		var got string
		for _, c := range ns.Status.Conditions {
			if c.Type == typ {
				got = fmt.Sprintf("%s %s %s", c.Status, c.Reason, c.Message)
			}
		}
		if got != w {
			errs = append(errs, fmt.Errorf("condition %s: %q, want %q", typ, got, w))
		}
	}
	return errors.Join(errs...)
}

func createCRD(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets.ns.example.com"},
		"spec": map[string]any{"group": "ns.example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object",
					"x-kubernetes-preserve-unknown-fields": true}}}}}}}
	if _, err := dyn.Resource(crdGVR).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func mustCreateNS(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// mustCreate retries create a little: a custom resource is served once
// its CRD is established.
func mustCreate(t *testing.T, what string, create func() error) {
	t.Helper()
	membertest.Eventually(t, 10*time.Second, func() error {
		if err := create(); err != nil {
			return fmt.Errorf("create %s: %w", what, err)
		}
		return nil
	})
}

func waitGone(t *testing.T, what string, get func() error) {
	t.Helper()
	membertest.WaitGone(t, 20*time.Second, what, func(context.Context) error { return get() })
}
