package auth

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http/httptest"
	"reflect"
	"testing"
)

// A user relayed to the leader (RelayUser) is the user the leader
// authenticates from a member's connection: name, uid, groups and extras
// (a ServiceAccount token's credential-id), and only those: relay and
// impersonation headers the client sent are dropped.
func TestRelayUserRoundTrip(t *testing.T) {
	u := &User{Name: "system:serviceaccount:a:bot", UID: "u-1", Groups: []string{"system:serviceaccounts", GroupAuthenticated},
		Extra: map[string][]string{CredentialIDKey: {"JTI=abc"}, "example.com/two": {"x", "y"}}}
	r := httptest.NewRequest("POST", "/api/v1/namespaces/a/pods", nil)
	r.Header.Set("Impersonate-Extra-Scopes", "stale")
	r.Header.Set(RemoteExtraHeaderPrefix+"Stale", "stale")
	RelayUser(r.Header, u)
	member := &x509.Certificate{Subject: pkix.Name{CommonName: "m1", Organization: []string{"litek8s:members"}}}
	r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{member}}}
	got, err := (&Authenticator{MemberOrg: "litek8s:members"}).Authenticate(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, u) {
		t.Errorf("relayed %+v, leader sees %+v", u, got)
	}
	if r.Header.Get("Impersonate-Extra-Scopes") != "" {
		t.Errorf("Impersonate-Extra- header relayed")
	}
}
