package member_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"sigs.k8s.io/yaml"
)

// Conformance of the read path's representations and selectors: field
// selectors per kind, PartialObjectMetadata(List), YAML, protobuf and the
// Table options, against the kube-apiserver 1.37 captures where there is
// one and against kube's rules (as the tests below state them) where there
// is none.

// names lists the metadata.name of a list's items (or a Table's rows).
func names(t *testing.T, body []byte) []string {
	t.Helper()
	var l struct {
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("list: %v: %s", err, body)
	}
	out := []string{}
	for _, it := range l.Items {
		out = append(out, it.Metadata.Name)
	}
	return out
}

func TestConformanceFieldSelectors(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.setup(t, exchange{golden: "objects/configmap-post.json"})
	g.waitRootCA(t)
	g.run(t, exchange{golden: "errors/400-unsupported-field-selector.json"}, cmpOpts{})
	g.setup(t, exchange{golden: "objects/node-post.json"})
	g.setup(t, exchange{golden: "objects/pod-post.json", body: rewrite(`"spec":{`, `"spec":{"nodeName":"golden-node",`)})
	g.setup(t, exchange{golden: "objects/event-post.json"})
	g.setup(t, exchange{golden: "objects/secret-post.json"})
	g.mustDo(t, "POST", "/api/v1/namespaces/golden/pods",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"unbound"},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"x"}]}}`)

	for _, c := range []struct {
		path, selector string
		want           []string
	}{
		{"/api/v1/namespaces/golden/pods", "spec.nodeName=golden-node", []string{"golden-pod"}},
		{"/api/v1/namespaces/golden/pods", "spec.nodeName=", []string{"unbound"}},
		{"/api/v1/namespaces/golden/pods", "spec.host=golden-node", []string{"golden-pod"}}, // kube converts it
		{"/api/v1/namespaces/golden/pods", "status.phase!=Succeeded,status.phase!=Failed", []string{"golden-pod", "unbound"}},
		{"/api/v1/namespaces/golden/pods", "spec.restartPolicy=Never", []string{"unbound"}},
		{"/api/v1/namespaces/golden/pods", "spec.schedulerName=default-scheduler,spec.hostNetwork=false", []string{"golden-pod", "unbound"}},
		{"/api/v1/namespaces/golden/pods", "status.podIPs=10.0.0.1", []string{}}, // accepted, never set
		{"/api/v1/pods", "metadata.namespace=golden,metadata.name=unbound", []string{"unbound"}},
		{"/api/v1/namespaces/golden/events", "involvedObject.kind=Pod,involvedObject.name=golden-pod", []string{"golden-pod.golden0001"}},
		{"/api/v1/namespaces/golden/events", "source=golden-capture,reason=GoldenTest,type=Normal", []string{"golden-pod.golden0001"}},
		{"/api/v1/namespaces/golden/events", "involvedObject.uid=other", []string{}},
		{"/api/v1/namespaces/golden/secrets", "type=Opaque", []string{"golden-secret"}},
		{"/api/v1/nodes", "spec.unschedulable=false", []string{"golden-node"}},
		{"/api/v1/namespaces", "status.phase=Active,metadata.name=golden", []string{"golden"}},
		{"/api/v1/namespaces/golden/configmaps", "metadata.name!=golden-cm", []string{"kube-root-ca.crt"}},
	} {
		code, b := g.do(t, "GET", c.path+"?fieldSelector="+strings.ReplaceAll(c.selector, "=", "%3D"), "")
		if code != http.StatusOK {
			t.Errorf("%s?fieldSelector=%s: %d %s", c.path, c.selector, code, b)
			continue
		}
		if got := names(t, b); !slices.Equal(got, c.want) {
			t.Errorf("%s?fieldSelector=%s: %v, want %v", c.path, c.selector, got, c.want)
		}
	}

	// Unsupported fields: 400 BadRequest, worded by the kind's field label
	// conversion (kube's exact messages).
	for _, c := range []struct{ path, selector, msg string }{
		{"/api/v1/namespaces/golden/pods", "spec.foo=bar", `field label not supported: spec.foo`},
		{"/api/v1/nodes", "metadata.namespace=x", `field label not supported: metadata.namespace`},
		{"/apis/apps/v1/namespaces/golden/deployments", "status.replicas=1",
			`"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"/api/v1/namespaces/golden/events", "regarding.name=x", `field label not supported: regarding.name`},
	} {
		code, b := g.do(t, "GET", c.path+"?fieldSelector="+c.selector, "")
		st := mustParse(t, "litek8s", b)
		if code != http.StatusBadRequest || st.get("message").str() != c.msg || st.get("reason").str() != "BadRequest" ||
			st.get("details") != nil {
			t.Errorf("%s?fieldSelector=%s: %d %s, want 400 %q", c.path, c.selector, code, b, c.msg)
		}
	}
}

func TestConformancePartialObjectMetadata(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.setup(t, exchange{golden: "objects/configmap-post.json"})
	g.waitRootCA(t)
	g.setup(t, exchange{golden: "lists/configmap-2-post.json"})
	g.run(t, exchange{golden: "lists/configmap-get-partialobjectmetadata.json"}, cmpOpts{})
	g.run(t, exchange{golden: "lists/configmaps-list-partialobjectmetadata.json"}, cmpOpts{})

	accept := func(as, v string) string {
		return "application/json;as=" + as + ";v=" + v + ";g=meta.k8s.io,application/json"
	}
	get := func(t *testing.T, target, accept string) (int, *jv) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", g.base+target, nil)
		req.Header.Set("Authorization", "Bearer "+g.token)
		req.Header.Set("Accept", accept)
		req.Header.Set("User-Agent", "golden-curl/1.0")
		resp, err := g.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		return resp.StatusCode, mustParse(t, "litek8s", buf.Bytes())
	}
	t.Run("v1beta1", func(t *testing.T) {
		_, v := get(t, "/api/v1/namespaces/golden/configmaps", accept("PartialObjectMetadataList", "v1beta1"))
		if v.get("apiVersion").str() != "meta.k8s.io/v1beta1" || v.at("items").vals[0].get("apiVersion").str() != "meta.k8s.io/v1beta1" {
			t.Errorf("v1beta1 list: %s", v.compact())
		}
		_, v = get(t, "/api/v1/namespaces/golden/configmaps/golden-cm", accept("PartialObjectMetadata", "v1beta1"))
		if v.get("kind").str() != "PartialObjectMetadata" || v.get("apiVersion").str() != "meta.k8s.io/v1beta1" {
			t.Errorf("v1beta1 object: %s", v.compact())
		}
	})
	t.Run("wrong shape is 406", func(t *testing.T) {
		// kube negotiates the transformation first, then cannot apply it.
		code, v := get(t, "/api/v1/namespaces/golden/configmaps", accept("PartialObjectMetadata", "v1"))
		if code != http.StatusNotAcceptable || v.get("message").str() !=
			"you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)" {
			t.Errorf("object shape on a list: %d %s", code, v.compact())
		}
		code, v = get(t, "/api/v1/namespaces/golden/configmaps/golden-cm", accept("PartialObjectMetadataList", "v1"))
		if code != http.StatusNotAcceptable || v.get("reason").str() != "NotAcceptable" {
			t.Errorf("list shape on an object: %d %s", code, v.compact())
		}
	})
}

// YAML answers are kube's JSON converted with sigs.k8s.io/yaml: keys sorted.
func TestConformanceYAML(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.setup(t, exchange{golden: "lists/configmap-2-post.json"})
	ex := exchange{golden: "lists/configmap-get.yaml"}
	m, resp, got := g.send(t, ex)
	checkHead(t, m, resp)
	// Normalize both documents through JSON (dropping managedFields and
	// the values of this run), then render them as YAML again: the bytes
	// must be the same.
	norm := func(what string, y []byte) string {
		j, err := yaml.YAMLToJSON(y)
		if err != nil {
			t.Fatalf("%s YAML: %v", what, err)
		}
		v := mustParse(t, what, j)
		newNormalizer().walk(v, "")
		out, err := yaml.JSONToYAML([]byte(v.compact()))
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if w, g := norm("golden", readGolden(t, ex.golden)), norm("litek8s", got); w != g {
		t.Errorf("YAML differs from kube's (normalized):\n--- kube:\n%s--- litek8s:\n%s", w, g)
	}
	if j, _ := yaml.YAMLToJSON(got); !bytes.Equal(mustYAML(t, j), got) {
		t.Errorf("YAML is not in kube's form (sorted keys, sigs.k8s.io/yaml):\n%s", got)
	}
	// A list too (with the root CA publisher's kube-root-ca.crt, as in kube).
	g.waitRootCA(t)
	code, b := g.doAccept(t, "/api/v1/namespaces/golden/configmaps", "application/yaml")
	var l corev1.ConfigMapList
	if err := yaml.UnmarshalStrict(b, &l); code != http.StatusOK || err != nil || l.Kind != "ConfigMapList" ||
		len(l.Items) != 2 || l.Items[0].Name != "golden-cm-2" || l.Items[1].Name != "kube-root-ca.crt" {
		t.Errorf("YAML list: %d %v %s", code, err, b)
	}
}

func mustYAML(t *testing.T, j []byte) []byte {
	t.Helper()
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// doAccept GETs target with an Accept header and returns the raw body.
func (g *goldenClient) doAccept(t *testing.T, target, accept string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", g.base+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "golden-curl/1.0")
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

// Protobuf: kube answers the capture's protobuf-first Accept in protobuf;
// litek8s answers it in JSON (which every client sending it accepts) and
// answers protobuf when protobuf is all the client accepts, byte for byte
// what kube sends once the values of the run (uid, resourceVersion,
// timestamps) are replaced.
func TestConformanceProtobuf(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	// The capture's object was created by curl (its managedFields manager).
	g.mustDo(t, "POST", "/api/v1/namespaces/golden/configmaps?fieldManager=curl",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"golden-immutable"},"immutable":true,"data":{"k":"v"}}`)

	ex := exchange{golden: "misc/configmap-get-protobuf.pb"}
	_, resp, b := g.send(t, ex)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/json" ||
		mustParse(t, "litek8s", b).at("metadata", "name").str() != "golden-immutable" {
		t.Errorf("protobuf-first Accept: %d %q %s, want the JSON object", resp.StatusCode, ct, b)
	}

	code, got := g.doAccept(t, "/api/v1/namespaces/golden/configmaps/golden-immutable", "application/vnd.kubernetes.protobuf")
	if code != http.StatusOK {
		t.Fatalf("protobuf GET: %d %s", code, got)
	}
	ser := protobuf.NewSerializer(runtimeScheme(t), runtimeScheme(t))
	ours := decodeProto[*corev1.ConfigMap](t, ser, got)
	want := decodeProto[*corev1.ConfigMap](t, ser, readGolden(t, ex.golden))
	for i := range want.ManagedFields { // managedFields times differ on every run
		if i < len(ours.ManagedFields) {
			want.ManagedFields[i].Time = ours.ManagedFields[i].Time
		}
	}
	want.UID, want.ResourceVersion, want.CreationTimestamp = ours.UID, ours.ResourceVersion, ours.CreationTimestamp
	var wb bytes.Buffer
	if err := ser.Encode(want, &wb); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wb.Bytes(), got) {
		t.Errorf("protobuf answer differs from kube's (normalized):\nkube:    %q\nlitek8s: %q", wb.Bytes(), got)
	}

	code, got = g.doAccept(t, "/api/v1/namespaces/golden/configmaps?limit=1", "application/vnd.kubernetes.protobuf")
	l := decodeProto[*corev1.ConfigMapList](t, ser, got)
	if code != http.StatusOK || len(l.Items) != 1 || l.Items[0].Name != "golden-immutable" || l.ResourceVersion == "" {
		t.Errorf("protobuf list: %d %+v", code, l)
	}
	code, got = g.doAccept(t, "/api/v1/namespaces/golden/configmaps/golden-immutable",
		"application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	pom := decodeProto[*metav1.PartialObjectMetadata](t, ser, got)
	if code != http.StatusOK || pom.Name != "golden-immutable" || pom.Kind != "PartialObjectMetadata" {
		t.Errorf("protobuf PartialObjectMetadata: %d %+v", code, pom)
	}
	// No Table in protobuf: with a JSON fallback, JSON (kube too).
	g.waitRootCA(t)
	tab := g.check(t, exchange{golden: "misc/configmaps-table-protobuf-first.pb"}, cmpOpts{
		golden: keepRows("golden-immutable", "kube-root-ca.crt")})
	if mustParse(t, "litek8s", tab).get("kind").str() != "Table" {
		t.Errorf("protobuf-first Table Accept: %s", tab)
	}
}

func runtimeScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	metav1.AddToGroupVersion(s, metav1.SchemeGroupVersion)
	s.AddKnownTypes(metav1.SchemeGroupVersion, &metav1.PartialObjectMetadata{}, &metav1.PartialObjectMetadataList{})
	return s
}

func decodeProto[T runtime.Object](t *testing.T, ser *protobuf.Serializer, b []byte) T {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("k8s\x00")) {
		t.Fatalf("not kube's protobuf envelope: %q", b)
	}
	obj, _, err := ser.Decode(b, nil, nil)
	if err != nil {
		t.Fatalf("protobuf: %v", err)
	}
	v, ok := obj.(T)
	if !ok {
		t.Fatalf("protobuf holds %T", obj)
	}
	return v
}

// Tables: Table v1 only, includeObject=Metadata, a Table watch with
// includeObject=Object, and kube's 400 for an unknown includeObject.
func TestConformanceTableOptions(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.setup(t, exchange{golden: "objects/configmap-post.json"})
	g.waitRootCA(t)
	g.run(t, exchange{golden: "tables/configmaps-table-v1-only.json"}, cmpOpts{})
	g.setup(t, exchange{golden: "objects/pod-post.json", body: rewrite(`"spec":{`, `"spec":{"nodeName":"golden-node",`)})
	// The golden pod was bound by kube-scheduler (pods/binding), ours is
	// created bound: their managedFields differ.
	g.run(t, exchange{golden: "tables/pods-table-includeObject-Metadata.json"}, cmpOpts{golden: keepRows("golden-pod"),
		drop: []string{"rows.*.object.metadata.managedFields"}})

	t.Run("configmaps-watch-table-includeObject-Object", func(t *testing.T) {
		rv := metaField(t, g.mustDo(t, "GET", "/api/v1/namespaces/golden/configmaps", ""), "resourceVersion")
		w := g.watch(t, exchange{golden: "watch/configmaps-watch-table-includeObject-Object.jsonl",
			target: "/api/v1/namespaces/golden/configmaps?watch=1&resourceVersion=" + rv + "&includeObject=Object"})
		g.mutateByCurl(t, "golden-watch-3")
		g.mutateByCurl(t, "golden-watch-4")
		w.next(6)
		w.compare("watch/configmaps-watch-table-includeObject-Object.jsonl", cmpOpts{})
	})
	t.Run("includeObject invalid", func(t *testing.T) {
		code, b := g.doAccept(t, "/api/v1/namespaces/golden/configmaps?includeObject=All", tableAccept)
		want := `Unable to convert to Table as requested: includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty`
		if st := mustParse(t, "litek8s", b); code != http.StatusBadRequest || st.get("message").str() != want {
			t.Errorf("includeObject=All: %d %s, want 400 %q", code, b, want)
		}
	})
}

// mutateByCurl creates, patches and deletes ConfigMap name as the
// captures' curl (field manager "curl") did while the watches ran.
func (g *goldenClient) mutateByCurl(t *testing.T, name string) {
	t.Helper()
	const cms = "/api/v1/namespaces/golden/configmaps"
	g.mustDo(t, "POST", cms+"?fieldManager=curl", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+
		`","labels":{"app":"golden-watch"}},"data":{"step":"1"}}`)
	g.mustDo(t, "PATCH", cms+"/"+name+"?fieldManager=curl", `{"data":{"step":"2"}}`)
	g.mustDo(t, "DELETE", cms+"/"+name, "")
}

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// Pretty-printed JSON (indented, no trailing newline) for ?pretty=true and
// for curl's User-Agent, as kube does.
func TestConformancePretty(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.mustDo(t, "POST", "/api/v1/namespaces/golden/configmaps?fieldManager=curl",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"golden-immutable"},"immutable":true,"data":{"k":"v"}}`)
	g.run(t, exchange{golden: "misc/configmap-get-ua-curl-pretty.json"}, cmpOpts{})
	g.run(t, exchange{golden: "misc/configmap-get-pretty-true.json"}, cmpOpts{})
}
