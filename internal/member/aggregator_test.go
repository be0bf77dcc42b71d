package member_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// wardleServer is a test aggregated API server for wardle.example.com/v1alpha1:
// HTTPS with a certificate for wardle.wardle.svc, it trusts a request
// only with a front-proxy client certificate of the requestheader CA (and
// an allowed name) and answers with the X-Remote-* headers it got.
type wardleServer struct {
	srv     *httptest.Server
	caPEM   []byte
	port    int32
	rhPool  *x509.CertPool
	allowed []string
}

// echo is what the wardle server answers to a resource request.
type echo struct {
	User, UID, Path string
	Groups          []string
	Extra           map[string][]string
	Authorization   string
}

func startWardle(t *testing.T, requestHeaderCA []byte, allowed []string) *wardleServer {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "wardle-ca"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &key.PublicKey, key)
	must(t, err)
	ca, _ = x509.ParseCertificate(caDER)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "wardle.wardle.svc"},
		DNSNames: []string{"wardle.wardle.svc"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		NotBefore: ca.NotBefore, NotAfter: ca.NotAfter}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, key)
	must(t, err)
	w := &wardleServer{caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), rhPool: x509.NewCertPool(), allowed: allowed}
	if !w.rhPool.AppendCertsFromPEM(requestHeaderCA) {
		t.Fatal("requestheader-client-ca-file holds no certificate")
	}
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(w.serve))
	w.srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}},
		ClientAuth: tls.RequestClientCert}
	w.srv.StartTLS()
	t.Cleanup(w.srv.Close)
	_, p, _ := net.SplitHostPort(w.srv.Listener.Addr().String())
	port, _ := strconv.Atoi(p)
	w.port = int32(port)
	return w
}

// frontProxy checks the client certificate as kube's requestheader
// authenticator does.
func (w *wardleServer) frontProxy(r *http.Request) error {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return fmt.Errorf("no client certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	leaf := r.TLS.PeerCertificates[0]
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: w.rhPool, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return err
	}
	if !slices.Contains(w.allowed, leaf.Subject.CommonName) {
		return fmt.Errorf("CN %q is not allowed", leaf.Subject.CommonName)
	}
	return nil
}

func (w *wardleServer) serve(rw http.ResponseWriter, r *http.Request) {
	if err := w.frontProxy(r); err != nil {
		http.Error(rw, err.Error(), http.StatusUnauthorized)
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/apis/wardle.example.com/v1alpha1" {
		json.NewEncoder(rw).Encode(metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: "wardle.example.com/v1alpha1", APIResources: []metav1.APIResource{{Name: "flunders",
				SingularName: "flunder", Namespaced: true, Kind: "Flunder", Verbs: []string{"get", "list"}}}})
		return
	}
	if r.URL.Query().Get("watch") == "true" { // one event now, then hold the stream open
		rw.Write([]byte(`{"type":"ADDED","object":{"kind":"Flunder","apiVersion":"wardle.example.com/v1alpha1","metadata":{"name":"one"}}}` + "\n"))
		rw.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	e := echo{User: r.Header.Get("X-Remote-User"), UID: r.Header.Get("X-Remote-Uid"), Groups: r.Header.Values("X-Remote-Group"),
		Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), Extra: map[string][]string{}}
	for k, v := range r.Header {
		if x, ok := strings.CutPrefix(k, "X-Remote-Extra-"); ok {
			e.Extra[strings.ToLower(x)] = v
		}
	}
	json.NewEncoder(rw).Encode(e)
}

// TestAggregatedAPIServer: an APIService for wardle.example.com/v1alpha1
// pointing (through a Service and an EndpointSlice) at a test aggregated
// server is proxied by the leader and a follower with the user in kube's
// front-proxy headers and the member's front-proxy certificate, which
// verifies against the CA published in
// kube-system/extension-apiserver-authentication; the user is authorized
// by litek8s first; the Authorization header stays home; kubectl get
// apiservices prints it; a bad APIService is refused with kube's errors;
// a stopped server answers 503.
func TestAggregatedAPIServer(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no kubectl on PATH")
		}
		t.Skip("no kubectl on PATH")
	}
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	must(t, os.WriteFile(tokens, []byte(`alice-token,alice,u-alice,"devs,qa"`+"\n"), 0o600))
	c := membertest.StartCluster(t, 3, func(cfg *member.Config) {
		cfg.TokenAuthFile = tokens
		cfg.Controllers.APIService.Interval = 200 * time.Millisecond
	})
	leader, f := c.WaitLeader(), c.Follower()
	ctx := t.Context()
	cs := c.Clientset(f)

	// What aggregated servers read (as kube publishes it), and the Role
	// that lets them.
	var cm *corev1.ConfigMap
	membertest.Eventually(t, 10*time.Second, func() (err error) {
		cm, err = cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
		return err
	})
	for k, want := range map[string]string{"requestheader-allowed-names": `["front-proxy-client"]`,
		"requestheader-username-headers": `["X-Remote-User"]`, "requestheader-group-headers": `["X-Remote-Group"]`,
		"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`} {
		if cm.Data[k] != want {
			t.Errorf("%s = %q, want %q", k, cm.Data[k], want)
		}
	}
	if cm.Data["client-ca-file"] == "" || cm.Data["requestheader-client-ca-file"] == "" ||
		cm.Data["client-ca-file"] == cm.Data["requestheader-client-ca-file"] {
		t.Fatalf("client-ca-file and requestheader-client-ca-file must be two CAs: %v", cm.Data)
	}
	role, err := cs.RbacV1().Roles("kube-system").Get(ctx, "extension-apiserver-authentication-reader", metav1.GetOptions{})
	must(t, err)
	if r := role.Rules; len(r) != 1 || !slices.Equal(r[0].ResourceNames, []string{"extension-apiserver-authentication"}) {
		t.Errorf("extension-apiserver-authentication-reader rules: %+v", r)
	}

	var allowed []string
	must(t, json.Unmarshal([]byte(cm.Data["requestheader-allowed-names"]), &allowed))
	w := startWardle(t, []byte(cm.Data["requestheader-client-ca-file"]), allowed)
	must(t, create(ctx, cs.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "wardle"}}))
	must(t, create(ctx, cs.CoreV1().Services("wardle"), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "wardle"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}))
	ready, portName := true, "https"
	must(t, create(ctx, cs.DiscoveryV1().EndpointSlices("wardle"), &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "wardle-1", Labels: map[string]string{discoveryv1.LabelServiceName: "wardle"}},
		AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: &portName, Port: &w.port}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}}}))

	agg := aggregatorclient.NewForConfigOrDie(c.RESTConfig(f))
	port := int32(443)
	apisvc := &apiregv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.wardle.example.com"},
		Spec: apiregv1.APIServiceSpec{Group: "wardle.example.com", Version: "v1alpha1", CABundle: w.caPEM,
			GroupPriorityMinimum: 1000, VersionPriority: 15, Service: &apiregv1.ServiceReference{Namespace: "wardle", Name: "wardle", Port: &port}}}

	// Bad input: kube's validation, nothing stored.
	bad := apisvc.DeepCopy()
	bad.Name, bad.Spec.InsecureSkipTLSVerify, bad.Spec.GroupPriorityMinimum = "wardle", true, 0
	_, err = agg.ApiregistrationV1().APIServices().Create(ctx, bad, metav1.CreateOptions{})
	for _, want := range []string{`metadata.name: Invalid value: "wardle": must be ` + "`spec.version+\".\"+spec.group`" + `: "v1alpha1.wardle.example.com"`,
		"spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
		"spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present"} {
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("bad APIService: got %v, want 422 with %q", err, want)
		}
	}
	_, err = agg.ApiregistrationV1().APIServices().Create(ctx, apisvc, metav1.CreateOptions{})
	must(t, err)

	kubectl := func(i int, args ...string) (string, error) {
		t.Helper()
		cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", c.Kubeconfig(i), "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	const path = "/apis/wardle.example.com/v1alpha1/namespaces/team/flunders/one"
	for _, i := range []int{leader, f} {
		var out string
		membertest.Eventually(t, 10*time.Second, func() (err error) {
			out, err = kubectl(i, "get", "--raw", path)
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		})
		var e echo
		must(t, json.Unmarshal([]byte(out), &e))
		if e.User == "" || e.Path != path || e.Authorization != "" || !slices.Contains(e.Groups, "system:authenticated") {
			t.Errorf("member %d: the aggregated server got %+v", i, e)
		}
	}

	// A user of the token file: litek8s authorizes first (403 from RBAC),
	// then the server gets alice, her uid and groups.
	cfg := c.RESTConfig(f)
	cfg.BearerToken = "alice-token"
	alice := kubernetes.NewForConfigOrDie(cfg)
	raw := func() ([]byte, error) {
		return alice.CoreV1().RESTClient().Get().AbsPath(path).SetHeader("X-Remote-User", "mallory").DoRaw(ctx)
	}
	if _, err := raw(); !apierrors.IsForbidden(err) {
		t.Fatalf("alice without a role: %v, want 403", err)
	}
	must(t, create(ctx, cs.RbacV1().ClusterRoles(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "flunder-reader"},
		Rules: []rbacv1.PolicyRule{rrule([]string{"get"}, "wardle.example.com", "flunders")}}))
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "flunder-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacG, Kind: "ClusterRole", Name: "flunder-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacG, Name: "qa"}}}
	must(t, create(ctx, cs.RbacV1().ClusterRoleBindings(), crb))
	var e echo
	membertest.Eventually(t, 10*time.Second, func() error {
		b, err := raw()
		if err != nil {
			return err
		}
		return json.Unmarshal(b, &e)
	})
	if e.User != "alice" || e.UID != "u-alice" || !slices.Equal(e.Groups, []string{"devs", "qa", "system:authenticated"}) || e.Authorization != "" {
		t.Errorf("alice through the aggregator: %+v", e)
	}

	// What aggregated servers delegate to: a TokenReview of a
	// ServiceAccount token and a SubjectAccessReview of alice's request.
	lc := c.Clientset(leader)
	sa, err := lc.CoreV1().ServiceAccounts("wardle").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "apiserver"}}, metav1.CreateOptions{})
	must(t, err)
	tok, err := lc.CoreV1().ServiceAccounts("wardle").CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	must(t, err)
	membertest.Eventually(t, 5*time.Second, func() error { // once the follower has applied the ServiceAccount
		tr, err := cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tok.Status.Token}}, metav1.CreateOptions{})
		if err != nil || !tr.Status.Authenticated || tr.Status.User.Username != "system:serviceaccount:wardle:apiserver" {
			return fmt.Errorf("TokenReview: %v %+v", err, tr.Status)
		}
		return nil
	})
	sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "alice", Groups: []string{"qa"}, ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "wardle.example.com",
			Version: "v1alpha1", Resource: "flunders", Verb: "get", Namespace: "team", Name: "one"}}}, metav1.CreateOptions{})
	if err != nil || !sar.Status.Allowed {
		t.Errorf("SubjectAccessReview: %v %+v", err, sar.Status)
	}

	// A watch is streamed as the server writes it (not buffered).
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	stream, err := c.PlainClientset(f).CoreV1().RESTClient().Get().AbsPath("/apis/wardle.example.com/v1alpha1/namespaces/team/flunders").
		Param("watch", "true").Stream(wctx)
	must(t, err)
	line, err := bufio.NewReader(stream).ReadString('\n')
	if err != nil || !strings.Contains(line, `"ADDED"`) {
		t.Errorf("the watch's first event: %q %v", line, err)
	}
	cancel()
	stream.Close()

	out, err := kubectl(f, "get", "apiservices", "v1alpha1.wardle.example.com")
	if err != nil || !strings.Contains(out, "wardle/wardle") {
		t.Errorf("kubectl get apiservices: %v\n%s", err, out)
	}

	// Discovery (aggregated, which kubectl asks for, and legacy) lists the
	// group/version with the server's resources, on every member.
	for _, i := range []int{leader, f} {
		out, err := kubectl(i, "api-resources", "--api-group=wardle.example.com", "--cache-dir", filepath.Join(dir, "cache-"+strconv.Itoa(i)))
		if err != nil || !strings.Contains(out, "flunders") || !strings.Contains(out, "wardle.example.com/v1alpha1") {
			t.Errorf("member %d: kubectl api-resources: %v\n%s", i, err, out)
		}
		out, err = kubectl(i, "get", "--raw", "/apis")
		if err != nil || !strings.Contains(out, `"wardle.example.com/v1alpha1"`) {
			t.Errorf("member %d: /apis: %v\n%s", i, err, out)
		}
	}

	// The leader keeps the Available conditions: Passed for wardle,
	// Local for the built-in group/versions (listed as kube lists them).
	available := func(name, status, reason, message string) {
		t.Helper()
		membertest.Eventually(t, 10*time.Second, func() error {
			s, err := agg.ApiregistrationV1().APIServices().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, cnd := range s.Status.Conditions {
				if cnd.Type == apiregv1.Available && string(cnd.Status) == status && cnd.Reason == reason && strings.Contains(cnd.Message, message) {
					return nil
				}
			}
			return fmt.Errorf("%s: conditions %+v, want Available %s %s %q", name, s.Status.Conditions, status, reason, message)
		})
	}
	available("v1alpha1.wardle.example.com", "True", "Passed", "all checks passed")
	for _, name := range []string{"v1.", "v1.apps", "v1.admissionregistration.k8s.io", "v1.apiregistration.k8s.io", "v1.authentication.k8s.io"} {
		available(name, "True", "Local", "Local APIServices are always available")
	}
	// A CRD's group/version gets its Local APIService, which goes with
	// the CRD.
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gizmos.toys.example.com"},
"spec":{"group":"toys.example.com","scope":"Namespaced","names":{"plural":"gizmos","singular":"gizmo","kind":"Gizmo"},
"versions":[{"name":"v2","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	_, err = cs.CoreV1().RESTClient().Post().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").
		SetHeader("Content-Type", "application/json").Body([]byte(crd)).DoRaw(ctx)
	must(t, err)
	available("v2.toys.example.com", "True", "Local", "Local APIServices are always available")
	_, err = cs.CoreV1().RESTClient().Delete().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.toys.example.com").DoRaw(ctx)
	must(t, err)
	membertest.WaitGone(t, 10*time.Second, "APIService v2.toys.example.com", func(ctx context.Context) error {
		_, err := agg.ApiregistrationV1().APIServices().Get(ctx, "v2.toys.example.com", metav1.GetOptions{})
		return err
	})

	out, err = kubectl(f, "get", "apiservices")
	if err != nil || !regexp.MustCompile(`(?m)^v1\.apps\s+Local\s+True\s`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^v1alpha1\.wardle\.example\.com\s+wardle/wardle\s+True\s`).MatchString(out) {
		t.Errorf("kubectl get apiservices: %v\n%s", err, out)
	}

	// The server stops: kube's 503, and FailedDiscoveryCheck; its
	// endpoints go: MissingEndpoints; its Service: ServiceNotFound.
	w.srv.Close()
	_, err = c.PlainClientset(leader).CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
	if !apierrors.IsServiceUnavailable(err) {
		t.Errorf("with the server gone: %v, want 503", err)
	}
	available("v1alpha1.wardle.example.com", "False", "FailedDiscoveryCheck",
		"failing or missing response from https://wardle.wardle.svc/apis/wardle.example.com/v1alpha1")
	out, err = kubectl(f, "get", "apiservices", "v1alpha1.wardle.example.com")
	if err != nil || !strings.Contains(out, "False (FailedDiscoveryCheck)") {
		t.Errorf("kubectl get apiservices: %v\n%s", err, out)
	}
	must(t, cs.DiscoveryV1().EndpointSlices("wardle").Delete(ctx, "wardle-1", metav1.DeleteOptions{}))
	available("v1alpha1.wardle.example.com", "False", "MissingEndpoints", `endpoints for service/wardle in "wardle" have no addresses`)
	must(t, cs.CoreV1().Services("wardle").Delete(ctx, "wardle", metav1.DeleteOptions{}))
	available("v1alpha1.wardle.example.com", "False", "ServiceNotFound", `service/wardle in "wardle" is not present`)
	_, err = c.PlainClientset(f).CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
	if !apierrors.IsServiceUnavailable(err) {
		t.Errorf("with the APIService unavailable: %v, want 503 service unavailable", err)
	}
}
