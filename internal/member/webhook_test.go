package member_test

import (
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
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// webhookCerts makes a CA and a serving certificate for 127.0.0.1 and
// the Service name wh.wh-system.svc; it returns the CA's PEM.
func webhookCerts(t *testing.T) (tls.Certificate, []byte) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook-test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"wh.wh-system.svc"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

// reviewHandler answers AdmissionReviews with what decide returns.
func reviewHandler(t *testing.T, decide func(req *admissionv1.AdmissionRequest, labels map[string]string) *admissionv1.AdmissionResponse) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var rev admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&rev); err != nil || rev.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		var obj struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		_ = json.Unmarshal(rev.Request.Object.Raw, &obj)
		resp := decide(rev.Request, obj.Metadata.Labels)
		resp.UID = rev.Request.UID
		rev.Response, rev.Request = resp, nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&rev)
	}
}

// addLabel is a JSONPatch response adding label k=v (labels exist: every
// test object has some).
func addLabel(k, v string) *admissionv1.AdmissionResponse {
	patch := fmt.Sprintf(`[{"op":"add","path":"/metadata/labels/%s","value":%q}]`, k, v)
	return &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)}
}

// TestAdmissionWebhooks: a real HTTPS webhook server, reached by URL and
// through a selector-less Service with an EndpointSlice the test writes,
// mutates and validates ConfigMaps on a 3-member cluster; one case per
// field, each through the leader and through a follower.
func TestAdmissionWebhooks(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	ctx := t.Context()
	leader := c.WaitLeader()
	admin := c.Clientset(leader)

	cert, caPEM := webhookCerts(t)
	mux := http.NewServeMux()
	mux.Handle("/mutate", reviewHandler(t, func(req *admissionv1.AdmissionRequest, l map[string]string) *admissionv1.AdmissionResponse {
		return addLabel("mutated", "yes")
	}))
	mux.Handle("/validate", reviewHandler(t, func(req *admissionv1.AdmissionRequest, l map[string]string) *admissionv1.AdmissionResponse {
		if l["deny"] == "true" {
			return &admissionv1.AdmissionResponse{Allowed: false, Warnings: []string{"test webhook warning"},
				Result: &metav1.Status{Code: http.StatusConflict, Message: "denied by the test webhook"}}
		}
		return &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"test webhook warning"}}
	}))
	mux.Handle("/first", reviewHandler(t, func(req *admissionv1.AdmissionRequest, l map[string]string) *admissionv1.AdmissionResponse {
		second := l["second"]
		if second == "" {
			second = "none"
		}
		return addLabel("first", "saw-"+second)
	}))
	mux.Handle("/second", reviewHandler(t, func(req *admissionv1.AdmissionRequest, l map[string]string) *admissionv1.AdmissionResponse {
		return addLabel("second", "yes")
	}))
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
		http.Error(w, "too late", http.StatusServiceUnavailable)
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	port, _ := strconv.Atoi(srv.URL[strings.LastIndex(srv.URL, ":")+1:])
	down := closedPort(t)

	// Namespaces: the webhooks apply to labelled ones only.
	for name, l := range map[string]map[string]string{"wh": {"webhook": "on"}, "other": nil, "wh-system": nil} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The Service without a selector and its EndpointSlice to the server.
	if _, err := admin.CoreV1().Services("wh-system").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "wh"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443, Protocol: corev1.ProtocolTCP}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.DiscoveryV1().EndpointSlices("wh-system").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "wh-1", Labels: map[string]string{discoveryv1.LabelServiceName: "wh", discoveryv1.LabelManagedBy: "webhook-test"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	nsSel := &metav1.LabelSelector{MatchLabels: map[string]string{"webhook": "on"}}
	url := func(path string) admregv1.WebhookClientConfig {
		return admregv1.WebhookClientConfig{URL: ptr.To(srv.URL + path), CABundle: caPEM}
	}
	svc := func(path string) admregv1.WebhookClientConfig {
		return admregv1.WebhookClientConfig{Service: &admregv1.ServiceReference{Namespace: "wh-system", Name: "wh", Path: ptr.To(path)}, CABundle: caPEM}
	}
	rules := []admregv1.RuleWithOperations{{Operations: []admregv1.OperationType{admregv1.Create, admregv1.Update},
		Rule: admregv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}
	none, some := ptr.To(admregv1.SideEffectClassNone), ptr.To(admregv1.SideEffectClassSome)
	fail, ignore := ptr.To(admregv1.Fail), ptr.To(admregv1.Ignore)
	has := func(k string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: k, Operator: metav1.LabelSelectorOpExists}}}
	}
	mwh := func(name string, cc admregv1.WebhookClientConfig, obj *metav1.LabelSelector, se *admregv1.SideEffectClass) admregv1.MutatingWebhook {
		return admregv1.MutatingWebhook{Name: name, ClientConfig: cc, Rules: rules, NamespaceSelector: nsSel, ObjectSelector: obj,
			SideEffects: se, AdmissionReviewVersions: []string{"v1"}, FailurePolicy: fail}
	}
	first := mwh("first.test.litek8s.io", url("/first"), has("reinvoke"), none)
	first.ReinvocationPolicy = ptr.To(admregv1.IfNeededReinvocationPolicy)
	ignored := mwh("ignore.test.litek8s.io", admregv1.WebhookClientConfig{URL: ptr.To(fmt.Sprintf("https://127.0.0.1:%d/", down)), CABundle: caPEM}, has("down-ignore"), none)
	ignored.FailurePolicy = ignore
	slow := mwh("slow.test.litek8s.io", url("/slow"), has("slow"), none)
	slow.TimeoutSeconds = ptr.To(int32(1))
	mutating := &admregv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "test-mutating"}, Webhooks: []admregv1.MutatingWebhook{
		mwh("mutate.test.litek8s.io", url("/mutate"), &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "skip", Operator: metav1.LabelSelectorOpDoesNotExist}}}, none),
		first,
		mwh("second.test.litek8s.io", svc("/second"), has("reinvoke"), none),
		mwh("fail.test.litek8s.io", admregv1.WebhookClientConfig{URL: ptr.To(fmt.Sprintf("https://127.0.0.1:%d/", down)), CABundle: caPEM}, has("down-fail"), none),
		ignored, slow,
		mwh("sideeffects.test.litek8s.io", url("/mutate"), has("side-effects"), some),
	}}
	validating := &admregv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "test-validating"}, Webhooks: []admregv1.ValidatingWebhook{{
		Name: "validate.test.litek8s.io", ClientConfig: svc("/validate"), Rules: rules, NamespaceSelector: nsSel,
		SideEffects: none, AdmissionReviewVersions: []string{"v1"}, FailurePolicy: fail,
		MatchConditions: []admregv1.MatchCondition{{Name: "not-exempt", Expression: `!('exempt' in object.metadata.labels)`}},
	}}}
	if _, err := admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mutating, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, validating, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	n := 0
	create := func(cs kubernetes.Interface, ns string, labels map[string]string, dry bool) (*corev1.ConfigMap, error) {
		n++
		opts := metav1.CreateOptions{}
		if dry {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		l := map[string]string{"case": strconv.Itoa(n)}
		for k, v := range labels {
			l[k] = v
		}
		return cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", n), Labels: l}}, opts)
	}
	// The configurations reach the leader's informers.
	deadline := time.Now().Add(15 * time.Second)
	for {
		cm, err := create(admin, "wh", nil, true)
		if err == nil && cm.Labels["mutated"] == "yes" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhooks never applied: %v %v", cm, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	for _, via := range []struct {
		name string
		i    int
	}{{"leader", leader}, {"follower", c.Follower()}} {
		t.Run(via.name, func(t *testing.T) {
			cs, warns := followerClientOf(t, c, via.i)
			wantStatus := func(err error, code int32, msg string) {
				t.Helper()
				var se *apierrors.StatusError
				if !errors.As(err, &se) || se.ErrStatus.Code != code || !strings.Contains(se.ErrStatus.Message, msg) {
					t.Errorf("got %v, want %d %q", err, code, msg)
				}
			}
			t.Run("mutate by url", func(t *testing.T) {
				cm, err := create(cs, "wh", nil, false)
				if err != nil || cm.Labels["mutated"] != "yes" {
					t.Errorf("%v %v", cm, err)
				}
			})
			t.Run("validate through a service: status and warnings", func(t *testing.T) {
				warns.take()
				_, err := create(cs, "wh", map[string]string{"deny": "true"}, false)
				wantStatus(err, http.StatusConflict, `admission webhook "validate.test.litek8s.io" denied the request: denied by the test webhook`)
				if w := warns.take(); !containsString(w, "test webhook warning") {
					t.Errorf("warnings %q", w)
				}
			})
			t.Run("namespaceSelector", func(t *testing.T) {
				cm, err := create(cs, "other", map[string]string{"deny": "true"}, false)
				if err != nil || cm.Labels["mutated"] != "" {
					t.Errorf("a namespace without the label was admitted by the webhooks: %v %v", cm, err)
				}
			})
			t.Run("objectSelector", func(t *testing.T) {
				cm, err := create(cs, "wh", map[string]string{"skip": "1"}, false)
				if err != nil || cm.Labels["mutated"] != "" {
					t.Errorf("%v %v", cm, err)
				}
			})
			t.Run("matchConditions", func(t *testing.T) {
				if _, err := create(cs, "wh", map[string]string{"deny": "true", "exempt": "1"}, false); err != nil {
					t.Errorf("a request the match condition excludes was denied: %v", err)
				}
			})
			t.Run("failurePolicy Fail, server down", func(t *testing.T) {
				_, err := create(cs, "wh", map[string]string{"down-fail": "1"}, false)
				wantStatus(err, http.StatusInternalServerError, `failed calling webhook "fail.test.litek8s.io"`)
			})
			t.Run("failurePolicy Ignore, server down", func(t *testing.T) {
				if _, err := create(cs, "wh", map[string]string{"down-ignore": "1"}, false); err != nil {
					t.Error(err)
				}
			})
			t.Run("timeout", func(t *testing.T) {
				start := time.Now()
				_, err := create(cs, "wh", map[string]string{"slow": "1"}, false)
				wantStatus(err, http.StatusInternalServerError, `failed calling webhook "slow.test.litek8s.io"`)
				if d := time.Since(start); d > 2500*time.Millisecond {
					t.Errorf("a 1s webhook timeout took %v", d)
				}
			})
			t.Run("reinvocation", func(t *testing.T) {
				cm, err := create(cs, "wh", map[string]string{"reinvoke": "1"}, false)
				if err != nil || cm.Labels["first"] != "saw-yes" || cm.Labels["second"] != "yes" {
					t.Errorf("the first webhook was not reinvoked after the second's change: %v %v", cm, err)
				}
			})
			t.Run("dry-run and sideEffects", func(t *testing.T) {
				cm, err := create(cs, "wh", nil, true)
				if err != nil || cm.Labels["mutated"] != "yes" {
					t.Errorf("dry run with sideEffects None: %v %v", cm, err)
				}
				_, err = create(cs, "wh", map[string]string{"side-effects": "1"}, true)
				wantStatus(err, http.StatusBadRequest, "sideeffects.test.litek8s.io")
			})
		})
	}
	// The endpointslice controller left the selector-less Service's slice
	// alone (the calls through the Service above depended on it).
	es, err := admin.DiscoveryV1().EndpointSlices("wh-system").Get(ctx, "wh-1", metav1.GetOptions{})
	if err != nil || es.Labels[discoveryv1.LabelManagedBy] != "webhook-test" || len(es.Endpoints) != 1 {
		t.Errorf("the test's EndpointSlice changed: %v %v", es, err)
	}
}

// followerClientOf is a clientset of member i with a warning recorder.
func followerClientOf(t *testing.T, c *membertest.Cluster, i int) (*kubernetes.Clientset, *warningRecorder) {
	t.Helper()
	cfg := restConfig(t, c, i)
	rec := &warningRecorder{}
	cfg.WarningHandler = rec
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, rec
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

// closedPort is a local port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return p
}
