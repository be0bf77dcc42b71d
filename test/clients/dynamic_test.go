package clients

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.clients.litek8s.io
spec:
  group: clients.litek8s.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
`

const widgetCR = `
apiVersion: clients.litek8s.io/v1
kind: Widget
metadata:
  name: w1
  labels: {app: dynamic}
spec: {size: 1, color: red}
`

// statefulSetObj is the built-in baseline, with the statefulset
// controller off (a controller would race the test's updates).
const statefulSetObj = `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: d1
  labels: {app: dynamic}
spec:
  replicas: 1
  selector: {matchLabels: {app: dynamic}}
  template:
    metadata: {labels: {app: dynamic}}
    spec:
      containers: [{name: c, image: registry.k8s.io/pause:3.10}]
`

func mustUnstructured(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func dynamicClients(t *testing.T, c *membertest.Cluster) []*dynamic.DynamicClient {
	t.Helper()
	var out []*dynamic.DynamicClient
	for i := range c.N() {
		cfg := c.RESTConfig(i)
		cfg.WrapTransport = membertest.RetryUnavailable // a Raft election is not what this test is about
		d, err := dynamic.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// The dynamic client creates a CRD through one member, and once every
// member serves it, round-trips a custom resource across members: create,
// get, list by label, watch, update, delete. Built-in kinds go through the
// same path as a baseline.
func TestDynamicClientRoundTrip(t *testing.T) {
	c := membertest.StartCluster(t, 3, func(cfg *member.Config) { cfg.Controllers.Disabled = []string{"statefulset"} })
	dyn := dynamicClients(t, c)
	cs := c.Clientset(0)
	createNamespace(t, cs, "dynamic")

	t.Run("statefulset", func(t *testing.T) {
		roundTrip(t, dyn, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"},
			mustUnstructured(t, statefulSetObj), "spec", "replicas", int64(3))
	})
	t.Run("custom-resource", func(t *testing.T) {
		requireServed(t, cs.Discovery(), "apiextensions.k8s.io/v1", "customresourcedefinitions", "CustomResourceDefinitions")
		ctx := t.Context()
		crd, err := dyn[0].Resource(crdGVR).Create(ctx, mustUnstructured(t, widgetCRD), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create CRD: %v", err)
		}
		waitCRDServed(t, c, crd.GetName(), "clients.litek8s.io/v1", "widgets")
		gvr := schema.GroupVersionResource{Group: "clients.litek8s.io", Version: "v1", Resource: "widgets"}
		roundTrip(t, dyn, gvr, mustUnstructured(t, widgetCR), "spec", "size", int64(2))

		// Deleting the CRD deletes its objects and stops serving it.
		if _, err := dyn[1].Resource(gvr).Namespace("dynamic").Create(ctx, mustUnstructured(t, widgetCR), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := dyn[2].Resource(crdGVR).Delete(ctx, crd.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete CRD: %v", err)
		}
		for i := range c.N() {
			membertest.Eventually(t, 30*time.Second, func() error {
				if _, err := dyn[i].Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return fmt.Errorf("member %d: get the deleted CRD: %v, want 404", i, err)
				}
				_, err := dyn[i].Resource(gvr).Namespace("dynamic").List(ctx, metav1.ListOptions{})
				if !apierrors.IsNotFound(err) {
					return fmt.Errorf("member %d: list widgets after the CRD is deleted: %v, want 404", i, err)
				}
				return nil
			})
		}
		// Created again, the CRD starts empty: its objects went with it.
		if _, err := dyn[0].Resource(crdGVR).Create(ctx, mustUnstructured(t, widgetCRD), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create the CRD again: %v", err)
		}
		waitCRDServed(t, c, crd.GetName(), "clients.litek8s.io/v1", "widgets")
		for i := range c.N() {
			l, err := dyn[i].Resource(gvr).Namespace("").List(ctx, metav1.ListOptions{})
			switch {
			case err != nil:
				t.Errorf("member %d: list widgets after the CRD was created again: %v", i, err)
			case len(l.Items) != 0:
				t.Errorf("member %d: %d widgets outlived their CRD, e.g. %s/%s", i, len(l.Items), l.Items[0].GetNamespace(), l.Items[0].GetName())
			}
		}
	})
	c.SameObjects(t.Context(), "/api/v1/namespaces")
}

// waitCRDServed waits for the CRD's Established condition and for every
// member to list the resource in discovery.
func waitCRDServed(t *testing.T, c *membertest.Cluster, name, groupVersion, resource string) {
	t.Helper()
	ctx := t.Context()
	for i := range c.N() {
		d, err := dynamic.NewForConfig(c.RESTConfig(i))
		if err != nil {
			t.Fatal(err)
		}
		cs, err := kubernetes.NewForConfig(c.RESTConfig(i))
		if err != nil {
			t.Fatal(err)
		}
		membertest.Eventually(t, 30*time.Second, func() error {
			crd, err := d.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			established := false
			for _, cd := range conds {
				m, _ := cd.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					established = true
				}
			}
			if !established {
				return fmt.Errorf("member %d: CRD %s not Established: %v", i, name, conds)
			}
			l, err := cs.Discovery().ServerResourcesForGroupVersion(groupVersion)
			if err != nil {
				return fmt.Errorf("member %d: discovery of %s: %w", i, groupVersion, err)
			}
			for _, r := range l.APIResources {
				if r.Name == resource {
					return nil
				}
			}
			return fmt.Errorf("member %d: %s not in discovery of %s", i, resource, groupVersion)
		})
	}
}

// roundTrip creates obj in namespace "dynamic" through member 0, reads it
// through member 1, lists it by label through member 2, watches an update
// (field path set to val) made through member 1 and the delete made
// through member 2.
func roundTrip(t *testing.T, dyn []*dynamic.DynamicClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, path0, path1 string, val int64) {
	t.Helper()
	ctx := t.Context()
	const ns = "dynamic"
	res := func(i int) dynamic.ResourceInterface { return dyn[i].Resource(gvr).Namespace(ns) }
	created, err := res(0).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", gvr.Resource, err)
	}
	if created.GetUID() == "" || created.GetResourceVersion() == "" || created.GetCreationTimestamp().Time.IsZero() {
		t.Errorf("created object lacks uid/resourceVersion/creationTimestamp: %v", created.Object["metadata"])
	}
	if created.GetAPIVersion() != obj.GetAPIVersion() || created.GetKind() != obj.GetKind() {
		t.Errorf("created object is %s %s, want %s %s", created.GetAPIVersion(), created.GetKind(), obj.GetAPIVersion(), obj.GetKind())
	}
	got, err := res(1).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get through member 1: %v", err)
	}
	if got.GetResourceVersion() != created.GetResourceVersion() || got.GetUID() != created.GetUID() {
		t.Errorf("member 1 has %s@%s, want %s@%s", got.GetUID(), got.GetResourceVersion(), created.GetUID(), created.GetResourceVersion())
	}
	l, err := res(2).List(ctx, metav1.ListOptions{LabelSelector: "app=dynamic"})
	if err != nil {
		t.Fatalf("list through member 2: %v", err)
	}
	if len(l.Items) != 1 || l.Items[0].GetName() != obj.GetName() || l.GetResourceVersion() == "" {
		t.Errorf("list app=dynamic: %d items, rv %q", len(l.Items), l.GetResourceVersion())
	}
	if l, err := res(2).List(ctx, metav1.ListOptions{LabelSelector: "app=other"}); err != nil || len(l.Items) != 0 {
		t.Errorf("list app=other: %v, %v", l, err)
	}

	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// Only this object: the controllers may add their own objects to the
	// namespace (kube-root-ca.crt, the default ServiceAccount) at any time.
	w, err := res(2).Watch(wctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion(),
		FieldSelector: "metadata.name=" + obj.GetName()})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	if err := unstructured.SetNestedField(got.Object, val, path0, path1); err != nil {
		t.Fatal(err)
	}
	updated, err := res(1).Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update through member 1: %v", err)
	}
	if v, _, _ := unstructured.NestedInt64(updated.Object, path0, path1); v != val || updated.GetResourceVersion() == got.GetResourceVersion() {
		t.Errorf("update answered %s.%s=%d at rv %s", path0, path1, v, updated.GetResourceVersion())
	}
	if _, err := res(0).Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("update with a stale resourceVersion: %v, want 409 Conflict", err)
	}
	if err := res(2).Delete(ctx, obj.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete through member 2: %v", err)
	}
	for _, want := range []watch.EventType{watch.Modified, watch.Deleted} {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch ended before %s", want)
			}
			u, _ := ev.Object.(*unstructured.Unstructured)
			if ev.Type != want || u == nil || u.GetName() != obj.GetName() {
				t.Fatalf("watch event %s %T, want %s of %s", ev.Type, ev.Object, want, obj.GetName())
			}
			if v, _, _ := unstructured.NestedInt64(u.Object, path0, path1); v != val {
				t.Errorf("%s event carries %s.%s=%d, want %d", ev.Type, path0, path1, v, val)
			}
		case <-wctx.Done():
			t.Fatalf("no %s event", want)
		}
	}
	for i := range dyn {
		if _, err := res(i).Get(ctx, obj.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("member %d: get after delete: %v, want 404", i, err)
		}
	}
}
