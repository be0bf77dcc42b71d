package main

import (
	"crypto/tls"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// memberSerial is the serial of the member certificate in a member's list.
func memberSerial(t *testing.T, m MemberCerts) string {
	t.Helper()
	for _, c := range m.Certs {
		if c.Name == "member" {
			return c.Serial
		}
	}
	t.Fatalf("member %s lists no member certificate: %+v", m.ID, m)
	return ""
}

// servedSerial is the serial of the certificate member i's API listener
// serves to a new connection.
func servedSerial(t *testing.T, c *membertest.Cluster, i int) string {
	t.Helper()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(c.URL(i), "https://"), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return fmt.Sprintf("%X", conn.ConnectionState().PeerCertificates[0].SerialNumber)
}

// Issue 17: `ctl certs list --all` shows every member's certificates (the
// one each serves), and `ctl certs rotate --member ID` gives that member a
// new certificate, served at once, and no other.
func TestCtlCerts(t *testing.T) {
	c := membertest.StartCluster(t, 2)
	kc := c.Kubeconfig(0)

	var before CertsOutput
	ctlJSON(t, &before, "certs", "list", "--all", "--kubeconfig", kc)
	if len(before.Members) != 2 {
		t.Fatalf("certs list --all: %+v", before)
	}
	for i, m := range before.Members {
		if m.ID != fmt.Sprintf("m%d", i) || m.Error != "" || len(m.Certs) != 2 {
			t.Fatalf("member %d: %+v, want m%d with a member certificate and the CA", i, m, i)
		}
		if got, want := memberSerial(t, m), servedSerial(t, c, i); got != want {
			t.Errorf("%s lists serial %s, serves %s", m.ID, got, want)
		}
		for _, cert := range m.Certs {
			if cert.Issuer != "CN=litek8s-ca" || cert.File == "" || cert.NotAfter.IsZero() {
				t.Errorf("%s: %+v", m.ID, cert)
			}
			if (cert.Name == "member") != (cert.RenewAt != nil) {
				t.Errorf("%s %s: renewAt %v", m.ID, cert.Name, cert.RenewAt)
			}
		}
	}
	out, stderr, err := ctl(t.Context(), "certs", "list", "--kubeconfig", kc)
	if err != nil || !strings.Contains(out, "CN=m0,O=litek8s:members") || !strings.Contains(out, "NOT AFTER") ||
		strings.Contains(out, "CN=m1") {
		t.Errorf("certs list (table, m0 only): %v\n%s%s", err, out, stderr)
	}

	var rotated CertsOutput
	ctlJSON(t, &rotated, "certs", "rotate", "--member", "m1", "--kubeconfig", kc)
	newSerial := memberSerial(t, rotated.Members[0])
	if rotated.Members[0].ID != "m1" || newSerial == memberSerial(t, before.Members[1]) {
		t.Fatalf("rotate m1: %+v", rotated)
	}
	if got := servedSerial(t, c, 1); got != newSerial {
		t.Errorf("m1 serves %s after rotate, want %s", got, newSerial)
	}
	var after CertsOutput
	ctlJSON(t, &after, "certs", "list", "--all", "--kubeconfig", kc)
	if memberSerial(t, after.Members[0]) != memberSerial(t, before.Members[0]) || memberSerial(t, after.Members[1]) != newSerial {
		t.Errorf("after rotating m1: %+v", after)
	}
	// the members still talk: writes through both, over new connections
	for i := range c.N() {
		c.CloseIdleConnections(i)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("after-rotate-%d", i)}}
		if _, err := c.PlainClientset(i).CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Errorf("create through m%d after rotating m1: %v", i, err)
		}
	}

	if _, stderr, err := ctl(t.Context(), "certs", "rotate", "--member", "nobody", "--kubeconfig", kc); err == nil ||
		!strings.Contains(stderr, `no member "nobody"`) {
		t.Errorf("rotate --member nobody: %v\n%s", err, stderr)
	}
}
