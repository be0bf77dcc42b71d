package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

const ns = "hostile"

// hostileCase is one request and the Status it must get.
type hostileCase struct {
	name   string
	method string // POST when empty
	path   string // the namespace's configmaps when empty
	ctype  string // application/json when empty
	body   []byte
	code   int
	reason metav1.StatusReason
	msg    string // a part of the message that says what is wrong
	// chunked sends the body without a Content-Length.
	chunked bool
}

const cmPath = "/api/v1/namespaces/" + ns + "/configmaps"

func configMap(name, data string) []byte {
	return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":` + name + `},"data":` + data + `}`)
}

func manyFields(n int) []byte {
	b := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fields"}`)
	for i := range n {
		b = fmt.Appendf(b, `,"f%d":0`, i)
	}
	return append(b, '}')
}

func nested(open, close string, n int) string {
	return strings.Repeat(open, n) + strings.Repeat(close, n)
}

// cases are the hostile requests and kube's answers to them.
func cases(t *testing.T) []hostileCase {
	million := "[" + strings.TrimSuffix(strings.Repeat("0,", 1_000_000), ",") + "]"
	deploy := func(replicas string) []byte {
		return []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":` + replicas +
			`,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`)
	}
	const deployPath = "/apis/apps/v1/namespaces/" + ns + "/deployments"
	name := func(n string) []byte { b, _ := json.Marshal(n); return configMap(string(b), `{"k":"v"}`) }
	cs := []hostileCase{
		// nesting
		{name: "deep arrays in a data value", body: configMap(`"deep"`, `{"k":`+nested("[", "]", 10_000)+`}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		{name: "deep objects in a data value", body: configMap(`"deep"`, `{"k":`+nested(`{"a":`, "}", 10_000)+`}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		{name: "deep arrays at the top", body: []byte(nested("[", "]", 10_000)), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		{name: "deep objects at the top", body: []byte(nested(`{"a":`, "}", 10_000)), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		{name: "deep unknown field", body: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":` + nested(`{"a":`, "}", 10_000) + `}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		{name: "deep labels", body: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","labels":` + nested(`{"a":`, "}", 10_000) + `}}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		// sizes
		{name: "a million-element array in a data value", body: configMap(`"huge"`, `{"k":`+million+`}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		{name: "a million-element array at the top", body: []byte(million), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		// kube's validation of each finalizer costs about 3 µs: 200,000
		// are enough to show that the 422 lists 100 of them
		{name: "200,000 invalid finalizers", body: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"huge","finalizers":[` + strings.TrimSuffix(strings.Repeat(`"",`, 200_000), ",") + `]}}`), code: 422, reason: metav1.StatusReasonInvalid, msg: "(and 399900 more errors)"},
		{name: "a body over 3 MiB", body: configMap(`"huge"`, `{"big":"`+strings.Repeat("x", 3<<20)+`"}`), code: 413, reason: metav1.StatusReasonRequestEntityTooLarge, msg: "Request entity too large: limit is 3145728"},
		{name: "a chunked body over 3 MiB", chunked: true, body: configMap(`"huge"`, `{"big":"`+strings.Repeat("x", 3<<20)+`"}`), code: 413, reason: metav1.StatusReasonRequestEntityTooLarge, msg: "Request entity too large: limit is 3145728"},
		{name: "an object over 1.5 MiB once encoded", body: configMap(`"huge"`, `{"big":"`+strings.Repeat("<", 300_000)+`"}`), code: 413, reason: metav1.StatusReasonRequestEntityTooLarge, msg: "limit is 1572864"},
		// invalid UTF-8
		{name: "invalid UTF-8 in the name", body: configMap("\"a\xffb\"", `{"k":"v"}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "UTF-8"},
		{name: "invalid UTF-8 in a key", body: configMap(`"utf8"`, "{\"k\xc3\":\"v\"}"), code: 400, reason: metav1.StatusReasonBadRequest, msg: "UTF-8"},
		{name: "invalid UTF-8 in a value", body: configMap(`"utf8"`, "{\"k\":\"\xed\xa0\x80\"}"), code: 400, reason: metav1.StatusReasonBadRequest, msg: "UTF-8"},
		{name: "invalid UTF-8 in a label", body: []byte("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"utf8\",\"labels\":{\"a\":\"\xfe\"}}}"), code: 400, reason: metav1.StatusReasonBadRequest, msg: "UTF-8"},
		// duplicate keys: kube's strict field validation names them
		{name: "duplicate data keys", path: cmPath + "?fieldValidation=Strict", body: configMap(`"dup"`, `{"k":"a","k":"b"}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: `duplicate field "data.k"`},
		{name: "duplicate metadata", path: cmPath + "?fieldValidation=Strict", body: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"metadata":{"name":"dup2"}}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: `duplicate field "metadata"`},
		{name: "duplicate name", path: cmPath + "?fieldValidation=Strict", body: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","name":"dup2"}}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: `duplicate field "metadata.name"`},
		// unknown fields: the decoder reports 100 of them, the warnings keep 4 KiB
		{name: "200,000 unknown fields, Strict", path: cmPath + "?fieldValidation=Strict", body: manyFields(200_000), code: 400, reason: metav1.StatusReasonBadRequest, msg: `unknown field "f99"`},
		{name: "200,000 unknown fields, Warn", path: cmPath + "?dryRun=All", body: manyFields(200_000), code: 201},
		// names
		{name: "no name", body: configMap(`""`, `{}`), code: 422, reason: metav1.StatusReasonInvalid, msg: "name or generateName is required"},
		{name: "uppercase name", body: name("Upper"), code: 422, reason: metav1.StatusReasonInvalid, msg: "RFC 1123"},
		{name: "254-character name", body: name(strings.Repeat("a", 254)), code: 422, reason: metav1.StatusReasonInvalid, msg: "must be no more than 253 characters"},
		{name: "leading dash", body: name("-a"), code: 422, reason: metav1.StatusReasonInvalid, msg: "RFC 1123"},
		{name: "empty label between dots", body: name("a..b"), code: 422, reason: metav1.StatusReasonInvalid, msg: "RFC 1123"},
		{name: "slash", body: name("a/b"), code: 422, reason: metav1.StatusReasonInvalid, msg: "RFC 1123"},
		{name: "dot", body: name("."), code: 422, reason: metav1.StatusReasonInvalid, msg: "RFC 1123"},
		{name: "dot dot", body: name(".."), code: 422, reason: metav1.StatusReasonInvalid, msg: "RFC 1123"},
		{name: "unicode", body: name("ñandú"), code: 422, reason: metav1.StatusReasonInvalid, msg: "RFC 1123"},
		{name: "percent", body: name("a%2Fb"), code: 422, reason: metav1.StatusReasonInvalid, msg: "RFC 1123"},
		{name: "dots in a Service name", path: "/api/v1/namespaces/" + ns + "/services", body: []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"a.b"},"spec":{"ports":[{"port":80}]}}`), code: 422, reason: metav1.StatusReasonInvalid, msg: "a DNS-1035 label must consist of"},
		{name: "dots in a namespace name", path: "/api/v1/namespaces", body: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a.b"}}`), code: 422, reason: metav1.StatusReasonInvalid, msg: "must not contain dots"},
		{name: "a number as the name", body: configMap(`1`, `{}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		// numbers
		{name: "replicas 1e400", path: deployPath, body: deploy("1e400"), code: 400, reason: metav1.StatusReasonBadRequest, msg: "Deployment"},
		{name: "replicas 2^63", path: deployPath, body: deploy("9223372036854775808"), code: 400, reason: metav1.StatusReasonBadRequest, msg: "Deployment"},
		{name: "replicas 2^31", path: deployPath, body: deploy("2147483648"), code: 400, reason: metav1.StatusReasonBadRequest, msg: "Deployment"},
		{name: "replicas -1", path: deployPath, body: deploy("-1"), code: 422, reason: metav1.StatusReasonInvalid, msg: "spec.replicas"},
		{name: "replicas 1.5", path: deployPath, body: deploy("1.5"), code: 400, reason: metav1.StatusReasonBadRequest, msg: "Deployment"},
		{name: "replicas as a string", path: deployPath, body: deploy(`"3"`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "Deployment"},
		{name: "a huge exponent", path: deployPath, body: deploy("1e999999999999999999"), code: 400, reason: metav1.StatusReasonBadRequest, msg: "Deployment"},
		// kinds
		{name: "a Pod posted to configmaps", body: []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "Pod in version \"v1\" cannot be handled as a ConfigMap"},
		// kube fills a missing kind or apiVersion in from the URL (the decoder's
		// defaults) and creates the object: so does litek8s (dry run here).
		{name: "kind missing", path: cmPath + "?dryRun=All", body: []byte(`{"apiVersion":"v1","metadata":{"name":"nokind"}}`), code: 201},
		{name: "apiVersion missing", path: cmPath + "?dryRun=All", body: []byte(`{"kind":"ConfigMap","metadata":{"name":"noversion"}}`), code: 201},
		{name: "apiVersion wrong", body: []byte(`{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"wrongversion"}}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: `no kind "ConfigMap" is registered for version "apps/v1"`},
		{name: "apiVersion unknown", body: []byte(`{"apiVersion":"nope/v9","kind":"ConfigMap","metadata":{"name":"wrongversion"}}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: `no kind "ConfigMap" is registered for version "nope/v9"`},
		{name: "a Deployment of extensions/v1beta1", path: "/apis/apps/v1/namespaces/" + ns + "/deployments", body: []byte(`{"apiVersion":"extensions/v1beta1","kind":"Deployment","metadata":{"name":"old"}}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: `no kind "Deployment" is registered for version "extensions/v1beta1"`},
		{name: "kind a number", body: []byte(`{"apiVersion":"v1","kind":7,"metadata":{"name":"kindnumber"}}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		// not objects
		{name: "empty body", body: nil, code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		{name: "null", body: []byte("null"), code: 422, reason: metav1.StatusReasonInvalid, msg: "name or generateName is required"},
		{name: "a JSON array", body: []byte(`[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"inarray"}}]`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		{name: "a JSON string", body: []byte(`"ConfigMap"`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		{name: "a JSON number", body: []byte(`42`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		{name: "two objects", body: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"one"}}{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"two"}}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		{name: "a NUL byte", body: []byte("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"nul\"}}\x00"), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		// patches
		{name: "a deep merge patch", method: http.MethodPatch, path: cmPath + "/target", ctype: "application/merge-patch+json", body: []byte(`{"data":{"k":` + nested("[", "]", 10_000) + `}}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: ""},
		{name: "a deep strategic patch", method: http.MethodPatch, path: cmPath + "/target", ctype: "application/strategic-merge-patch+json", body: []byte(`{"metadata":{"labels":` + nested(`{"a":`, "}", 10_000) + `}}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: ""},
		{name: "a JSON patch of a million ops", method: http.MethodPatch, path: cmPath + "/target", ctype: "application/json-patch+json", body: []byte("[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/x"},`, 100_000), ",") + "]"), code: 413, reason: metav1.StatusReasonRequestEntityTooLarge, msg: "The allowed maximum operations in a JSON patch is 10000, got 100000"},
		{name: "a patch with invalid UTF-8", method: http.MethodPatch, path: cmPath + "/target", ctype: "application/merge-patch+json", body: []byte("{\"data\":{\"k\":\"\xff\"}}"), code: 400, reason: metav1.StatusReasonBadRequest, msg: "UTF-8"},
		{name: "a patch that renames", method: http.MethodPatch, path: cmPath + "/target", ctype: "application/merge-patch+json", body: []byte(`{"metadata":{"name":"other"}}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "name"},
		{name: "an update with invalid UTF-8", method: http.MethodPut, path: cmPath + "/target", body: []byte("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"target\"},\"data\":{\"k\":\"\xff\"}}"), code: 400, reason: metav1.StatusReasonBadRequest, msg: "UTF-8"},
	}
	// protobuf
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	var valid bytes.Buffer
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "proto"}, Data: map[string]string{"k": strings.Repeat("v", 100)}}
	if err := pb.Encode(cm, &valid); err != nil {
		t.Fatal(err)
	}
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	magic := []byte{'k', '8', 's', 0}
	const proto = "application/vnd.kubernetes.protobuf"
	cs = append(cs,
		hostileCase{name: "protobuf: random bytes", ctype: proto, body: random, code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		hostileCase{name: "protobuf: truncated message", ctype: proto, body: valid.Bytes()[:valid.Len()-40], code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		hostileCase{name: "protobuf: magic then garbage", ctype: proto, body: append(slices.Clone(magic), random[:512]...), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		hostileCase{name: "protobuf: magic alone", ctype: proto, body: magic, code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		hostileCase{name: "protobuf: empty", ctype: proto, body: nil, code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		hostileCase{name: "protobuf: JSON", ctype: proto, body: configMap(`"pj"`, `{}`), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
		hostileCase{name: "protobuf: a huge length", ctype: proto, body: append(slices.Clone(magic), 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f), code: 400, reason: metav1.StatusReasonBadRequest, msg: "ConfigMap"},
	)
	return cs
}

// TestHostileInput sends every case to the leader and to a follower and
// checks the answer and that the store did not change.
func TestHostileInput(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	cs := c.Clientset(0)
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "target"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The namespace's controllers write its default ServiceAccount and
	// root CA ConfigMap: wait for them, then for the store to be still.
	membertest.Eventually(t, 20*time.Second, func() error {
		if _, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return err
		}
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err
	})
	leader, follower := c.WaitLeader(), c.Follower()
	before := waitStill(t, c, leader)
	for _, hc := range cases(t) {
		for _, m := range []struct {
			role string
			i    int
		}{{"leader", leader}, {"follower", follower}} {
			t.Run(m.role+"/"+hc.name, func(t *testing.T) { check(t, c, m.i, hc) })
		}
	}
	after := snapshot(t, c, leader)
	if diff := before.diff(after); diff != "" {
		t.Errorf("the store changed: %s", diff)
	}
	for i := range c.N() {
		if s := snapshot(t, c, i); before.diff(s) != "" {
			t.Errorf("member %d: %s", i, before.diff(s))
		}
	}
}

// check sends hc to member i and checks its answer.
func check(t *testing.T, c *membertest.Cluster, i int, hc hostileCase) {
	method, path, ctype := hc.method, hc.path, hc.ctype
	if method == "" {
		method = http.MethodPost
	}
	if path == "" {
		path = cmPath
	}
	if ctype == "" {
		ctype = "application/json"
	}
	start := time.Now()
	var body io.Reader = bytes.NewReader(hc.body)
	if hc.chunked {
		body = struct{ io.Reader }{body} // no length: sent chunked
	}
	code, h, b := do(t, c, i, method, path, ctype, body)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("answered after %v", d)
	}
	if n := len(strings.Join(h.Values("Warning"), "")); n > 8<<10 {
		t.Errorf("%d bytes of warnings", n)
	}
	if hc.code/100 == 2 { // accepted as kube accepts it: nothing is stored (dry run)
		if code != hc.code {
			t.Errorf("got %d, want %d: %.300s", code, hc.code, b)
		}
		return
	}
	if mt, _, _ := mime.ParseMediaType(h.Get("Content-Type")); mt != "application/json" {
		t.Fatalf("%d with Content-Type %q: %.300s", code, h.Get("Content-Type"), b)
	}
	var st metav1.Status
	if err := json.Unmarshal(b, &st); err != nil || st.Kind != "Status" || st.APIVersion != "v1" {
		t.Fatalf("%d, not a Status (%v): %.300s", code, err, b)
	}
	if code != hc.code || int(st.Code) != code || st.Reason != hc.reason || st.Status != metav1.StatusFailure {
		t.Errorf("got %d %s (Status code %d), want %d %s: %.500s", code, st.Reason, st.Code, hc.code, hc.reason, st.Message)
	}
	if st.Message == "" || !strings.Contains(st.Message, hc.msg) {
		t.Errorf("message %.300q (… %q) does not say %q", st.Message, st.Message[max(0, len(st.Message)-200):], hc.msg)
	}
	if len(b) > 64<<10 {
		t.Errorf("a %d-byte answer", len(b))
	}
	t.Logf("%d %s: %.300s", code, st.Reason, st.Message)
}

func do(t *testing.T, c *membertest.Cluster, i int, method, path, ctype string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	rc := c.RESTConfig(i)
	req, err := http.NewRequestWithContext(t.Context(), method, c.URL(i)+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+rc.BearerToken)
	req.Header.Set("Accept", "application/json")
	if method != http.MethodGet {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := (&http.Client{Transport: rc.Transport, Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, b
}

// state is what the test namespace holds, read from one member.
type state struct {
	rv      string            // a list's resourceVersion (the store's revision)
	objects map[string]string // resource/name → the stored object
}

var resources = []string{
	"/api/v1/namespaces/" + ns + "/configmaps", "/api/v1/namespaces/" + ns + "/services",
	"/api/v1/namespaces/" + ns + "/secrets", "/api/v1/namespaces/" + ns + "/serviceaccounts",
	"/api/v1/namespaces/" + ns + "/pods", "/apis/apps/v1/namespaces/" + ns + "/deployments",
	"/api/v1/namespaces",
}

// snapshot lists every resource the cases write to (a consistent read).
func snapshot(t *testing.T, c *membertest.Cluster, i int) state {
	t.Helper()
	s := state{objects: map[string]string{}}
	for _, r := range resources {
		code, _, b := do(t, c, i, http.MethodGet, r, "", http.NoBody)
		if code != http.StatusOK {
			t.Fatalf("list %s: %d %.300s", r, code, b)
		}
		var l struct {
			Metadata struct{ ResourceVersion string } `json:"metadata"`
			Items    []json.RawMessage                `json:"items"`
		}
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		if r == resources[0] {
			s.rv = l.Metadata.ResourceVersion
		}
		for _, it := range l.Items {
			var m struct{ Metadata struct{ Name string } }
			json.Unmarshal(it, &m)
			s.objects[r+"/"+m.Metadata.Name] = string(it)
		}
	}
	return s
}

// waitStill takes a snapshot once two in a row, a second apart, agree:
// nothing else writes to the store while the cases run.
func waitStill(t *testing.T, c *membertest.Cluster, i int) state {
	t.Helper()
	var s state
	membertest.Eventually(t, 20*time.Second, func() error {
		a := snapshot(t, c, i)
		time.Sleep(time.Second)
		s = snapshot(t, c, i)
		if d := a.diff(s); d != "" {
			return fmt.Errorf("the store is still changing: %s", d)
		}
		return nil
	})
	return s
}

func (s state) diff(o state) string {
	var d []string
	if s.rv != o.rv {
		d = append(d, fmt.Sprintf("list resourceVersion %s, then %s", s.rv, o.rv))
	}
	for k, v := range s.objects {
		if o.objects[k] != v {
			d = append(d, "changed or gone: "+k)
		}
	}
	for k := range o.objects {
		if _, ok := s.objects[k]; !ok {
			d = append(d, "new: "+k)
		}
	}
	slices.Sort(d)
	return strings.Join(d, "; ")
}
