package member_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// convWebhook is a CRD conversion webhook as operators run one: HTTPS
// with a certificate of its own CA, converting Widgets between v1
// (spec.size) and v2 (spec.replicas). It records how many objects each
// ConversionReview carried.
type convWebhook struct {
	srv    *httptest.Server
	caPEM  []byte
	mu     sync.Mutex
	counts []int    // objects per review, in order
	snis   []string // the TLS server name of each review
}

func startConvWebhook(t *testing.T) *convWebhook {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "conversion-ca"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ = x509.ParseCertificate(caDER)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "conv"},
		DNSNames: []string{"conv.conv-system.svc"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, NotBefore: ca.NotBefore, NotAfter: ca.NotAfter}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	w := &convWebhook{caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})}
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(w.serve))
	w.srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}}
	w.srv.StartTLS()
	t.Cleanup(w.srv.Close)
	return w
}

func (w *convWebhook) port() int {
	return w.srv.Listener.Addr().(*net.TCPAddr).Port
}

// serverNames returns the TLS server names of the reviews received so far.
func (w *convWebhook) serverNames() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.snis...)
}

// reviews returns the object counts of the reviews received so far.
func (w *convWebhook) reviews() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.counts...)
}

func (w *convWebhook) serve(rw http.ResponseWriter, r *http.Request) {
	var review apiextv1.ConversionReview
	if r.URL.Path != "/convert" || r.URL.Query().Get("timeout") != "30s" || json.NewDecoder(r.Body).Decode(&review) != nil || review.Request == nil {
		http.Error(rw, "bad conversion request "+r.URL.String(), http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	w.counts = append(w.counts, len(review.Request.Objects))
	w.snis = append(w.snis, r.TLS.ServerName)
	w.mu.Unlock()
	resp := &apiextv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for _, raw := range review.Request.Objects {
		var u unstructured.Unstructured
		if err := u.UnmarshalJSON(raw.Raw); err != nil {
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
			break
		}
		from, to := "size", "replicas"
		if review.Request.DesiredAPIVersion == "conv.example.com/v1" {
			from, to = "replicas", "size"
		}
		if n, ok, _ := unstructured.NestedInt64(u.Object, "spec", from); ok {
			unstructured.RemoveNestedField(u.Object, "spec", from)
			unstructured.SetNestedField(u.Object, n, "spec", to)
		}
		u.SetAPIVersion(review.Request.DesiredAPIVersion)
		b, _ := u.MarshalJSON()
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: b})
	}
	review.Response, review.Request = resp, nil
	rw.Header().Set("Content-Type", "application/json")
	json.NewEncoder(rw).Encode(&review)
}

// convCRD is the Widget CRD: v1 stored, v2 served, converted by the
// webhook at clientConfig.
func convCRD(clientConfig string) string {
	schema := func(field string) string {
		return `{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"` + field + `":{"type":"integer"}}}}}}`
	}
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.conv.example.com"},
	 "spec":{"group":"conv.example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
	  "conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":` + clientConfig + `}},
	  "versions":[{"name":"v1","served":true,"storage":true,"schema":` + schema("size") + `},
	   {"name":"v2","served":true,"storage":false,"schema":` + schema("replicas") + `,
	    "additionalPrinterColumns":[{"name":"Replicas","type":"integer","jsonPath":".spec.replicas"}]}]}}`
}

// A CRD with two versions and a conversion webhook (reached by url, then
// through a Service's EndpointSlice) serves get, list, watch and writes in
// both versions, through the leader and a follower: objects are stored in
// v1, shown in the shape of the version asked for with the same
// resourceVersion; a list converts its items in one ConversionReview; with
// the webhook down, v2 answers kube's 500 and nothing is stored.
func TestCRDConversionWebhook(t *testing.T) {
	c := membertest.StartCluster(t, 2, membertest.FastRaft)
	ctx := t.Context()
	leader := c.WaitLeader()
	follower := c.Follower()
	hook := startConvWebhook(t)
	cs := c.Clientset(leader)
	for _, ns := range []string{"conv-system", "team"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The Service the CRD names: no selector, its EndpointSlice points at
	// the webhook on 127.0.0.1.
	if _, err := cs.CoreV1().Services("conv-system").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "conv"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ready, portName, port := true, "https", int32(hook.port())
	if _, err := cs.DiscoveryV1().EndpointSlices("conv-system").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "conv-1", Labels: map[string]string{discoveryv1.LabelServiceName: "conv"}},
		AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	caB64, _ := json.Marshal(hook.caPEM) // []byte marshals as base64
	configs := []struct{ name, clientConfig, sni string }{
		{"url", fmt.Sprintf(`{"url":"https://127.0.0.1:%d/convert","caBundle":%s}`, hook.port(), caB64), ""}, // no SNI for an IP
		{"service", fmt.Sprintf(`{"service":{"namespace":"conv-system","name":"conv","path":"/convert"},"caBundle":%s}`, caB64), "conv.conv-system.svc"},
	}
	crdPath := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	for i, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			body := convCRD(cfg.clientConfig)
			if i == 0 {
				convDo(t, c, leader, "POST", crdPath, body, http.StatusCreated)
			} else {
				convDo(t, c, leader, "PATCH", crdPath+"/widgets.conv.example.com",
					`{"spec":{"conversion":{"webhook":{"clientConfig":{"url":null,`+cfg.clientConfig[1:]+`}}}}`, http.StatusOK)
			}
			c.SameObjects(ctx, crdPath) // both members serve this client config
			before := len(hook.serverNames())
			for _, m := range []int{leader, follower} {
				convRoundTrip(t, c, hook, m, fmt.Sprintf("%s-%d", cfg.name, m))
			}
			for _, sni := range hook.serverNames()[before:] {
				if sni != cfg.sni {
					t.Fatalf("a review came with TLS server name %q, want %q", sni, cfg.sni)
				}
			}
			// The printer columns are those of the version asked for,
			// evaluated on the converted objects.
			tbl := convDo(t, c, follower, "GET", "/apis/conv.example.com/v2/namespaces/team/widgets/"+cfg.name+"-"+strconv.Itoa(leader), "", http.StatusOK,
				"application/json;as=Table;v=v1;g=meta.k8s.io")
			if !strings.Contains(tbl, `"name":"Replicas","type":"integer"`) || !strings.Contains(tbl, `"cells":["`+cfg.name+"-"+strconv.Itoa(leader)+`",7]`) {
				t.Fatalf("v2 Table: %s", tbl)
			}
		})
	}

	t.Run("webhook down", func(t *testing.T) {
		hook.srv.Close()
		for _, m := range []int{leader, follower} {
			dyn := dynamicFor(t, c, m)
			v1, v2 := widgets(dyn, "v1"), widgets(dyn, "v2")
			if _, err := v1.Get(ctx, "url-"+strconv.Itoa(leader), metav1.GetOptions{}); err != nil {
				t.Fatalf("member %d: GET in the storage version needs no webhook: %v", m, err)
			}
			wantDown := func(what string, err error) {
				t.Helper()
				var se *apierrors.StatusError
				if !errors.As(err, &se) || se.ErrStatus.Code != 500 || se.ErrStatus.Reason != "" ||
					!strings.HasPrefix(se.ErrStatus.Message, "conversion webhook for conv.example.com/") ||
					!strings.Contains(se.ErrStatus.Message, ", Kind=Widget failed: ") {
					t.Fatalf("member %d: %s with the webhook down: got %#v, want kube's 500 conversion webhook error", m, what, err)
				}
			}
			_, err := v2.Get(ctx, "url-"+strconv.Itoa(leader), metav1.GetOptions{})
			wantDown("GET v2", err)
			_, err = v2.List(ctx, metav1.ListOptions{})
			wantDown("LIST v2", err)
			_, err = v2.Create(ctx, widget("v2", "down", 1), metav1.CreateOptions{})
			wantDown("CREATE v2", err)
			_, err = v2.Create(ctx, widget("v2", "down", 1), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			wantDown("dry-run CREATE v2", err)
			if _, err := v1.Get(ctx, "down", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("member %d: a create the webhook could not convert was stored: %v", m, err)
			}
			wantDown("DELETE v2", v2.Delete(ctx, "url-"+strconv.Itoa(leader), metav1.DeleteOptions{}))
			if _, err := v1.Get(ctx, "url-"+strconv.Itoa(leader), metav1.GetOptions{}); err != nil {
				t.Fatalf("member %d: a DELETE the webhook could not convert deleted: %v", m, err)
			}
		}
	})

	// A Webhook strategy needs its client config and review versions; None
	// must set neither (kube's messages).
	for _, tc := range []struct{ conversion, want string }{
		{`{"strategy":"Webhook"}`, `spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook`},
		{`{"strategy":"Webhook","webhook":{"clientConfig":{"url":"https://h/c"},"conversionReviewVersions":["v9"]}}`,
			`spec.conversion.conversionReviewVersions: Invalid value: [\"v9\"]: must include at least one of v1, v1beta1`},
		{`{"strategy":"Webhook","webhook":{"clientConfig":{"url":"http://h/c"},"conversionReviewVersions":["v1"]}}`,
			`spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]`},
		{`{"strategy":"None","webhook":{"conversionReviewVersions":["v1"]}}`,
			`spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook`},
	} {
		body := strings.Replace(convCRD(`{"url":"https://h/c"}`), `"name":"widgets.conv.example.com"`, `"name":"gizmos.conv.example.com"`, 1)
		body = strings.Replace(body, `"plural":"widgets","kind":"Widget"`, `"plural":"gizmos","kind":"Gizmo"`, 1)
		i := strings.Index(body, `"conversion":`)
		j := strings.Index(body, `"versions":`)
		body = body[:i] + `"conversion":` + tc.conversion + ",\n" + body[j:]
		got := convDo(t, c, follower, "POST", crdPath, body, http.StatusUnprocessableEntity)
		if !strings.Contains(got, tc.want) {
			t.Errorf("conversion %s: got %s, want %s", tc.conversion, got, tc.want)
		}
	}
	// A new storage version is appended to status.storedVersions.
	got := convDo(t, c, follower, "PATCH", crdPath+"/widgets.conv.example.com",
		`{"spec":{"versions":[{"name":"v1","served":true,"storage":false},{"name":"v2","served":true,"storage":true}]}}`, http.StatusOK)
	if !strings.Contains(got, `"storedVersions":["v1","v2"]`) {
		t.Errorf("after v2 became the storage version: %s", got)
	}
	c.SameObjects(ctx, "/apis/conv.example.com/v1/widgets", crdPath)
}

// convRoundTrip runs the get/list/watch/write checks through member m,
// with objects named prefix-*.
func convRoundTrip(t *testing.T, c *membertest.Cluster, hook *convWebhook, m int, name string) {
	t.Helper()
	ctx := t.Context()
	dyn := dynamicFor(t, c, m)
	v1, v2 := widgets(dyn, "v1"), widgets(dyn, "v2")
	var created *unstructured.Unstructured
	membertest.Eventually(t, 10*time.Second, func() (err error) { // the CRD's new client config reaches member m
		created, err = v2.Create(ctx, widget("v2", name, 3), metav1.CreateOptions{})
		return err
	})
	wantShape(t, "create v2", created, "v2", "replicas", 3)
	rv := created.GetResourceVersion()

	got1, err := v1.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantShape(t, "get v1", got1, "v1", "size", 3)
	got2, err := v2.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantShape(t, "get v2", got2, "v2", "replicas", 3)
	if got1.GetResourceVersion() != rv || got2.GetResourceVersion() != rv || got2.GetUID() != created.GetUID() {
		t.Fatalf("resourceVersion/uid differ: created %s, v1 %s, v2 %s", rv, got1.GetResourceVersion(), got2.GetResourceVersion())
	}

	// A list of v2 converts every item in one review; one of v1 calls no
	// webhook.
	before := len(hook.reviews())
	l1, err := v1.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(hook.reviews()); n != before {
		t.Fatalf("a list of the storage version called the webhook %d times", n-before)
	}
	l2, err := v2.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reviews := hook.reviews()[before:]
	if len(l2.Items) < 1 || len(reviews) != 1 || reviews[0] != len(l2.Items) {
		t.Fatalf("list of %d items: reviews %v, want one with every item", len(l2.Items), reviews)
	}
	if len(l1.Items) != len(l2.Items) || l1.GetResourceVersion() == "" {
		t.Fatalf("v1 lists %d items, v2 %d", len(l1.Items), len(l2.Items))
	}
	for i := range l2.Items {
		if _, ok, _ := unstructured.NestedInt64(l2.Items[i].Object, "spec", "replicas"); !ok || l2.Items[i].GetAPIVersion() != "conv.example.com/v2" {
			t.Fatalf("v2 list item %d: %v", i, l2.Items[i].Object)
		}
		if _, ok, _ := unstructured.NestedInt64(l1.Items[i].Object, "spec", "size"); !ok || l1.Items[i].GetAPIVersion() != "conv.example.com/v1" {
			t.Fatalf("v1 list item %d: %v", i, l1.Items[i].Object)
		}
	}
	// A page of v2 (limit 1) is converted too.
	page, err := v2.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("page: %v %v", page, err)
	}
	wantShape(t, "v2 page", &page.Items[0], "v2", "replicas", -1)

	// A watch of v2 shows an update made in v1, converted, with the
	// update's resourceVersion.
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	w, err := v2.Watch(wctx, metav1.ListOptions{ResourceVersion: rv, FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	got1.Object["spec"] = map[string]any{"size": int64(5)}
	updated, err := v1.Update(ctx, got1, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantShape(t, "update v1", updated, "v1", "size", 5)
	select {
	case ev := <-w.ResultChan():
		u, ok := ev.Object.(*unstructured.Unstructured)
		if ev.Type != watch.Modified || !ok {
			t.Fatalf("watch event %v %#v", ev.Type, ev.Object)
		}
		wantShape(t, "watch v2", u, "v2", "replicas", 5)
		if u.GetResourceVersion() != updated.GetResourceVersion() {
			t.Fatalf("watch event resourceVersion %s, the update's %s", u.GetResourceVersion(), updated.GetResourceVersion())
		}
	case <-wctx.Done():
		t.Fatal("no watch event for the update")
	}
	got2, err = v2.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantShape(t, "get v2 after the v1 update", got2, "v2", "replicas", 5)

	// An update in v2 is stored converted: v1 shows it.
	got2.Object["spec"] = map[string]any{"replicas": int64(7)}
	if _, err := v2.Update(ctx, got2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got1, err = v1.Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	wantShape(t, "get v1 after the v2 update", got1, "v1", "size", 7)

	// A dry run answers the converted object and stores nothing.
	dry, err := v2.Create(ctx, widget("v2", name+"-dry", 2), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	wantShape(t, "dry-run create v2", dry, "v2", "replicas", 2)
	if _, err := v1.Get(ctx, name+"-dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a dry-run create was stored: %v", err)
	}

	// A DELETE in v2 (kube answers a custom resource's with a Success
	// Status); one with a finalizer answers the object, in v2.
	fin := widget("v2", name+"-del", 4)
	fin.SetFinalizers([]string{"conv.example.com/hold"})
	if _, err := v2.Create(ctx, fin, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	path := "/apis/conv.example.com/v2/namespaces/team/widgets/" + name + "-del"
	if del := convDo(t, c, m, "DELETE", path, "", http.StatusOK); !strings.HasPrefix(del, `{"apiVersion":"conv.example.com/v2"`) ||
		!strings.Contains(del, `"spec":{"replicas":4}`) || !strings.Contains(del, `"deletionTimestamp"`) {
		t.Fatalf("DELETE in v2 of an object with a finalizer answered %s", del)
	}
	convDo(t, c, m, "PATCH", path, `{"metadata":{"finalizers":null}}`, http.StatusOK)
	if _, err := v1.Get(ctx, name+"-del", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the object is still there without its finalizer: %v", err)
	}
	if _, err := v2.Create(ctx, widget("v2", name+"-del", 4), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if del := convDo(t, c, m, "DELETE", path, "", http.StatusOK); !strings.Contains(del, `"status":"Success"`) {
		t.Fatalf("DELETE in v2 answered %s", del)
	}
}

func dynamicFor(t *testing.T, c *membertest.Cluster, m int) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(c.RESTConfig(m))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func widgets(d dynamic.Interface, version string) dynamic.ResourceInterface {
	return d.Resource(schema.GroupVersionResource{Group: "conv.example.com", Version: version, Resource: "widgets"}).Namespace("team")
}

func widget(version, name string, n int64) *unstructured.Unstructured {
	field := "replicas"
	if version == "v1" {
		field = "size"
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "conv.example.com/" + version, "kind": "Widget",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{field: n}}}
}

// wantShape checks u's apiVersion and that spec holds only field (= n
// unless n < 0).
func wantShape(t *testing.T, what string, u *unstructured.Unstructured, version, field string, n int64) {
	t.Helper()
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	got, ok := spec[field].(int64)
	if u.GetAPIVersion() != "conv.example.com/"+version || !ok || len(spec) != 1 || n >= 0 && got != n {
		t.Fatalf("%s: got %v, want apiVersion conv.example.com/%s with spec.%s=%d only", what, u.Object, version, field, n)
	}
}

// convDo sends a JSON request to member m as the admin and returns the
// body; the status code must be want.
func convDo(t *testing.T, c *membertest.Cluster, m int, method, path, body string, want int, accept ...string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, c.URL(m)+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if tok := c.Token(); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	req.Header.Set("Content-Type", "application/json")
	for _, a := range accept {
		req.Header.Set("Accept", a)
	}
	if method == http.MethodPatch {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	resp, err := membertest.RetryUnavailable(c.Transport(m)).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	return string(b)
}
