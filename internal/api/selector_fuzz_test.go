package api

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// selectorError checks that a refused selector is a 400 Status.
func selectorError(t *testing.T, what string, err error) {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Code != http.StatusBadRequest || se.ErrStatus.Message == "" {
		t.Fatalf("%s: refused with %v, want a 400 Status", what, err)
	}
}

// fuzzLabels reads a label set from arbitrary text: one key=value per line.
func fuzzLabels(text string) map[string]string {
	set := map[string]string{}
	for l := range strings.SplitSeq(text, "\n") {
		k, v, _ := strings.Cut(l, "=")
		set[k] = v
	}
	return set
}

// FuzzLabelSelector: a labelSelector either is a 400 Status or parses to
// a selector whose String() parses again to the same String() and
// selects the same label sets; matching any labels never panics.
//
//	go test -run '^$' -fuzz '^FuzzLabelSelector$' -fuzztime 30s ./internal/api/
func FuzzLabelSelector(f *testing.F) {
	for _, s := range []struct{ sel, labels string }{
		{"app=web", "app=web"},
		{"app=web,tier in (a,b),!canary", "app=web\ntier=a"},
		{"env notin (prod),team", "team=x\nenv=dev"},
		{"x!=y,z==w", "z=w"},
		{"example.com/key-1.b_c=v.1-x_y", "example.com/key-1.b_c=v.1-x_y"},
		{"a in ()", ""}, {"!a,!b", "c="}, {"a>1,b<3", "a=2\nb=2"},
		{"(", ""}, {"a=b=c", ""}, {"a in (b", ""}, {"k=" + strings.Repeat("v", 64), ""},
		{",,,", ""}, {" a = b ", "a=b"}, {"a,a,a", "a="},
	} {
		f.Add(s.sel, s.labels)
	}
	res := testResource("", "configmaps")
	f.Fuzz(func(t *testing.T, sel, labelText string) {
		s, err := parseSelector(url.Values{"labelSelector": {sel}}, res)
		if err != nil {
			selectorError(t, "labelSelector "+sel, err)
			return
		}
		set := fuzzLabels(labelText)
		obj := &kv.Object{Key: kv.Key{Resource: "configmaps", Namespace: "ns", Name: "n"}}
		obj.Labels = kv.LabelsOf(set)
		got := s.matches(obj)
		if s.labels == nil {
			if !got {
				t.Fatalf("%q selects nothing but matches nothing", sel)
			}
			return
		}
		str := s.labels.String()
		again, err := labels.Parse(str)
		if err != nil {
			t.Fatalf("%q is %q, which does not parse: %v", sel, str, err)
		}
		if again.String() != str {
			t.Fatalf("%q is %q, then %q", sel, str, again.String())
		}
		if again.Matches(labels.Set(set)) != got {
			t.Fatalf("%q (%q) matches %v: %v, reparsed %v", sel, str, set, got, !got)
		}
	})
}

// fuzzFieldResources are resources with each kind of field selector
// support: the default (metadata only), conversions, aliases, events.
var fuzzFieldResources = []*registry.Resource{
	testResource("", "configmaps"), testResource("", "pods"), testResource("", "nodes"),
	testResource("", "events"), testResource("events.k8s.io", "events"), testResource("batch", "jobs"),
	testResource("", "secrets"), testResource("", "services"), testResource("", "namespaces"),
	testResource("", "replicationcontrollers"), testResource("certificates.k8s.io", "certificatesigningrequests"),
}

// FuzzFieldSelector: a fieldSelector for any resource either is a 400
// Status or parses to a selector whose String() parses again to the same
// String(); the field values Derive computes from any stored bytes never
// panic, and matching them selects what kube's own field set would.
//
//	go test -run '^$' -fuzz '^FuzzFieldSelector$' -fuzztime 30s ./internal/api/
func FuzzFieldSelector(f *testing.F) {
	for _, s := range []struct {
		res      uint8
		sel, raw string
	}{
		{0, "metadata.name=n", `{"metadata":{"name":"n"}}`},
		{0, "metadata.namespace!=ns,metadata.name==n", `{}`},
		{1, "spec.nodeName=n1,status.phase!=Failed", podJSON},
		{1, "spec.host=n1", `{"spec":{"nodeName":"n1"}}`},
		{1, "status.podIP=10.0.0.1", `{"status":{"podIPs":[{"ip":"10.0.0.1"}]}}`},
		{1, "spec.hostNetwork=false", `{"spec":{"hostNetwork":true}}`},
		{2, "spec.unschedulable=true", `{"spec":{"unschedulable":true}}`},
		{3, "involvedObject.name=x,reason=Started,source=kubelet", `{"involvedObject":{"name":"x"},"reason":"Started"}`},
		{4, "regarding.name=x,reportingController=c", `{"regarding":{"name":"x"},"reportingController":"c"}`},
		{5, "status.successful=1", `{"status":{"succeeded":1}}`},
		{9, "status.replicas=0", `{"status":{"replicas":"x"}}`},
		{0, "data=x", `{}`}, {0, `metadata.name=a\,b`, `{}`}, {0, "metadata.name=", `[]`},
		{1, "spec.nodeName", "\x00"}, {0, "=", `{"metadata":`}, {0, "a==b==c", `nul`},
	} {
		f.Add(s.res, s.sel, []byte(s.raw))
	}
	f.Fuzz(func(t *testing.T, which uint8, sel string, raw []byte) {
		res := fuzzFieldResources[int(which)%len(fuzzFieldResources)]
		s, err := parseSelector(url.Values{"fieldSelector": {sel}}, res)
		if err != nil {
			selectorError(t, res.StoreKey()+" fieldSelector "+sel, err)
			return
		}
		obj := &kv.Object{Key: kv.Key{Resource: res.StoreKey(), Namespace: "ns", Name: "n"}, Raw: raw}
		obj.Fields, obj.Cells = Derive(res.StoreKey(), raw)
		got := s.matches(obj)
		if s.fields == nil {
			if !got {
				t.Fatalf("%q selects nothing but matches nothing", sel)
			}
			return
		}
		str := s.fields.String()
		again, err := fields.ParseSelector(str)
		if err != nil {
			t.Fatalf("%s: %q is %q, which does not parse: %v", res.StoreKey(), sel, str, err)
		}
		if again.String() != str {
			t.Fatalf("%s: %q is %q, then %q", res.StoreKey(), sel, str, again.String())
		}
		set := fields.Set{"metadata.name": "n", "metadata.namespace": "ns"}
		for k, v := range obj.Fields {
			set[k] = v
		}
		if again.Matches(set) != got {
			t.Fatalf("%s: %q (%q) matches %v: %v, as a field set %v", res.StoreKey(), sel, str, set, got, !got)
		}
	})
}
