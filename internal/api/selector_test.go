package api

import (
	"maps"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

const podJSON = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns","labels":{"app":"web","tier":"a"}},` +
	`"spec":{"restartPolicy":"Always","schedulerName":"default-scheduler","serviceAccountName":"default","nodeName":"n1",` +
	`"containers":[{"name":"c","image":"x"}]},"status":{"phase":"Running","podIP":"10.0.0.9","podIPs":[{"ip":"10.0.0.9"},{"ip":"fd00::9"}]}}`

// Derive computes every field kube's field set has, from the stored JSON.
func TestDeriveFields(t *testing.T) {
	for _, c := range []struct {
		resource, raw string
		want          map[string]string
	}{
		{"pods", podJSON, map[string]string{"spec.nodeName": "n1", "spec.restartPolicy": "Always",
			"spec.schedulerName": "default-scheduler", "spec.serviceAccountName": "default", "spec.hostNetwork": "false",
			"status.phase": "Running", "status.podIP": "10.0.0.9"}},
		{"pods", `{"spec":{"hostNetwork":true},"status":{"podIP":"10.1.1.1"}}`,
			map[string]string{"spec.hostNetwork": "true", "status.podIP": "10.1.1.1"}},
		{"nodes", `{"spec":{"unschedulable":true}}`, map[string]string{"spec.unschedulable": "true"}},
		{"nodes", `{"spec":{}}`, map[string]string{"spec.unschedulable": "false"}},
		{"namespaces", `{"status":{"phase":"Terminating"}}`, map[string]string{"status.phase": "Terminating"}},
		{"secrets", `{"type":"kubernetes.io/tls"}`, map[string]string{"type": "kubernetes.io/tls"}},
		{"services", `{"spec":{"type":"NodePort","clusterIP":"10.96.0.10"}}`,
			map[string]string{"spec.type": "NodePort", "spec.clusterIP": "10.96.0.10"}},
		{"events", `{"involvedObject":{"kind":"Pod","name":"p","namespace":"ns","uid":"u","apiVersion":"v1","resourceVersion":"7","fieldPath":"spec"},` +
			`"reason":"R","type":"Warning","reportingComponent":"rc","source":{"component":"kubelet"}}`,
			map[string]string{"involvedObject.kind": "Pod", "involvedObject.name": "p", "involvedObject.namespace": "ns",
				"involvedObject.uid": "u", "involvedObject.apiVersion": "v1", "involvedObject.resourceVersion": "7",
				"involvedObject.fieldPath": "spec", "reason": "R", "type": "Warning", "reportingComponent": "rc", "source": "kubelet"}},
		{"events", `{"reportingComponent":"rc"}`, map[string]string{"reportingComponent": "rc", "source": "rc"}},
		{"events.events.k8s.io", `{"regarding":{"kind":"Node","name":"n"},"reason":"R","reportingController":"ctl","type":"Normal"}`,
			map[string]string{"involvedObject.kind": "Node", "involvedObject.name": "n", "reason": "R",
				"reportingComponent": "ctl", "source": "ctl", "type": "Normal"}},
		{"jobs.batch", `{"status":{"succeeded":3}}`, map[string]string{"status.successful": "3"}},
		{"jobs.batch", `{"status":{}}`, map[string]string{"status.successful": "0"}},
		{"replicationcontrollers", `{"status":{"replicas":2}}`, map[string]string{"status.replicas": "2"}},
		{"certificatesigningrequests.certificates.k8s.io", `{"spec":{"signerName":"kubernetes.io/kubelet-serving"}}`,
			map[string]string{"spec.signerName": "kubernetes.io/kubelet-serving"}},
		{"configmaps", `{"data":{"a":"b"}}`, nil},
		{"deployments.apps", `{"status":{"replicas":2}}`, nil},
	} {
		got, _ := Derive(c.resource, []byte(c.raw))
		if !maps.Equal(got, c.want) {
			t.Errorf("%s %s:\n got %v\nwant %v", c.resource, c.raw, got, c.want)
		}
	}
}

func testResource(group, plural string) *registry.Resource {
	return &registry.Resource{Group: group, Version: "v1", Resource: plural}
}

func TestParseFieldSelector(t *testing.T) {
	for _, c := range []struct {
		res      *registry.Resource
		selector string
		err      string
	}{
		{testResource("", "pods"), "spec.nodeName=n1,status.phase!=Failed", ""},
		{testResource("", "pods"), "spec.host=n1", ""},
		{testResource("", "pods"), "spec.containers=x", "field label not supported: spec.containers"},
		{testResource("", "configmaps"), "metadata.namespace=a", ""},
		{testResource("", "configmaps"), "data=x", `"data" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{testResource("", "nodes"), "metadata.namespace=", "field label not supported: metadata.namespace"},
		{testResource("batch", "jobs"), "status.failed=1", `field label "status.failed" not supported for Job`},
		{testResource("events.k8s.io", "events"), "regarding.name=x,reportingController=c", ""},
		{testResource("events.k8s.io", "events"), "involvedObject.name=x", "field label not supported: involvedObject.name"},
		{testResource("", "pods"), "spec.nodeName", "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'"},
	} {
		_, err := parseSelector(url.Values{"fieldSelector": {c.selector}}, c.res)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.err {
			t.Errorf("%s %s: error %q, want %q", c.res.StoreKey(), c.selector, got, c.err)
		}
	}
}

func selectorObject() *kv.Object {
	obj := &kv.Object{Key: kv.Key{Resource: "pods", Namespace: "ns", Name: "p"}, Raw: []byte(podJSON)}
	obj.Labels = kv.LabelsOf(map[string]string{"app": "web", "tier": "a"})
	obj.Fields, obj.Cells = Derive("pods", obj.Raw)
	return obj
}

var selectorCases = []struct{ name, label, field string }{
	{"fields", "", "spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed"},
	{"alias", "", "spec.host=n1"},
	{"labels", "app=web,tier in (a,b),!canary", ""},
	{"both", "app=web", "metadata.namespace=ns,spec.schedulerName=default-scheduler"},
}

// Matching allocates nothing: labels and fields were derived at apply time.
func TestSelectorMatchDoesNotAllocate(t *testing.T) {
	obj := selectorObject()
	for _, c := range selectorCases {
		sel, err := parseSelector(url.Values{"labelSelector": {c.label}, "fieldSelector": {c.field}}, testResource("", "pods"))
		if err != nil {
			t.Fatal(err)
		}
		if !sel.matches(obj) {
			t.Errorf("%s does not match", c.name)
		}
		if n := testing.AllocsPerRun(100, func() { sel.matches(obj) }); n != 0 {
			t.Errorf("%s: %v allocations per match", c.name, n)
		}
	}
	sel, _ := parseSelector(url.Values{"fieldSelector": {"spec.nodeName=n2"}}, testResource("", "pods"))
	if sel.matches(obj) {
		t.Error("spec.nodeName=n2 matches a pod on n1")
	}
}

func BenchmarkSelectorMatch(b *testing.B) {
	obj := selectorObject()
	for _, c := range selectorCases {
		sel, err := parseSelector(url.Values{"labelSelector": {c.label}, "fieldSelector": {c.field}}, testResource("", "pods"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !sel.matches(obj) {
					b.Fatal("no match")
				}
			}
		})
	}
}

// BenchmarkDeriveFields is the apply-time cost of the field values of
// kube's objects (the golden captures' pod, event, node).
func BenchmarkDeriveFields(b *testing.B) {
	for _, c := range []struct{ resource, file string }{
		{"pods", "pod-post.json"}, {"events", "event-post.json"}, {"nodes", "node-post.json"},
	} {
		raw := readGolden(b, filepath.Join("objects", c.file))
		fs := registry.FieldsFor(c.resource)
		b.Run(c.resource, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				fs.Derive(raw)
			}
		})
	}
}
