package svcclient

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
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/kv"
)

// objects is a Reader over a fixed set of objects (a unit test's fake).
type objects map[kv.Key]*kv.Object

func (o objects) Get(_ context.Context, k kv.Key, _ bool) (*kv.Object, uint64, error) {
	if obj := o[k]; obj != nil {
		return obj, 1, nil
	}
	return nil, 0, kv.ErrNotFound
}

func (o objects) List(_ context.Context, resource, ns string, _ bool) (*kv.List, error) {
	var items []*kv.Object
	for k, obj := range o {
		if k.Resource == resource && k.Namespace == ns {
			items = append(items, obj)
		}
	}
	return &kv.List{Source: slice(items)}, nil
}

type slice []*kv.Object

func (s slice) Each(_, _ string, fn func(*kv.Object) bool) {
	for _, o := range s {
		if !fn(o) {
			return
		}
	}
}
func (s slice) Count(string) int { return len(s) }

func put(t *testing.T, o objects, resource string, obj metav1.Object, v any) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	k := kv.Key{Resource: resource, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	o[k] = &kv.Object{Key: k, Raw: raw, Derived: kv.Derived{Labels: kv.LabelsOf(obj.GetLabels())}}
}

// serve starts an HTTPS server whose certificate (from a new CA) names
// dnsName, and returns it with the CA's PEM.
func serve(t *testing.T, dnsName string) (*httptest.Server, []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ = x509.ParseCertificate(caDER)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, NotBefore: ca.NotBefore, NotAfter: ca.NotAfter}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "path="+r.URL.Path)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

func TestServiceThroughEndpointSlices(t *testing.T) {
	srv, caPEM := serve(t, "hook.team.svc")
	_, portStr, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)
	store := objects{}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hook", Namespace: "team"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}
	put(t, store, "services", svc, svc)
	ready, notReady := true, false
	name, p := "https", int32(port)
	es := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "hook-abc", Namespace: "team",
		Labels: map[string]string{discoveryv1.LabelServiceName: "hook"}},
		Ports: []discoveryv1.EndpointPort{{Name: &name, Port: &p}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
			{Addresses: []string{"192.0.2.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &notReady}},
		}}
	put(t, store, "endpointslices.discovery.k8s.io", es, es)

	c := New(store, nil)
	defer c.Close()
	ref := &ServiceRef{Namespace: "team", Name: "hook", Port: 443, Path: "/validate"}
	for range 5 { // the not-ready endpoint is never picked
		cl, req, err := c.Request(context.Background(), Target{Service: ref, CABundle: caPEM}, http.MethodPost, "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "path=/validate/x" {
			t.Fatalf("body %q, want path=/validate/x", body)
		}
	}

	// Another CA: the certificate is refused.
	_, otherCA := serve(t, "hook.team.svc")
	cl, req, err := c.Request(context.Background(), Target{Service: ref, CABundle: otherCA}, http.MethodGet, "")
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := cl.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a server certificate of another CA was accepted")
	}

	// No ready endpoint, no Service: kube's 503.
	ready = false
	put(t, store, "endpointslices.discovery.k8s.io", es, es)
	for _, r := range []*ServiceRef{ref, {Namespace: "team", Name: "missing", Port: 443}} {
		_, _, err := c.Request(context.Background(), Target{Service: r, CABundle: caPEM}, http.MethodGet, "")
		if !apierrors.IsServiceUnavailable(err) {
			t.Fatalf("%s: got %v, want 503 ServiceUnavailable", r.Name, err)
		}
	}
}

func TestURLTarget(t *testing.T) {
	srv, caPEM := serve(t, "localhost")
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := New(objects{}, nil)
	defer c.Close()
	cl, req, err := c.Request(context.Background(), Target{URL: "https://localhost:" + port + "/mutate", CABundle: caPEM}, http.MethodPost, "")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body, _ := io.ReadAll(resp.Body); string(body) != "path=/mutate" {
		t.Fatalf("body %q", body)
	}
	if _, _, err := c.Request(context.Background(), Target{URL: "http://localhost:" + port}, http.MethodGet, ""); err == nil {
		t.Fatal("an http URL was accepted")
	}
}
