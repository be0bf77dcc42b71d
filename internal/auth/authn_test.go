package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseTokenFile(t *testing.T) {
	users, err := ParseTokenFile(strings.NewReader("# comment\nt1,alice,u1,\"devs,ops\"\nt2,bob,u2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := users["t1"]; a == nil || a.Name != "alice" || a.UID != "u1" || !slices.Equal(a.Groups, []string{"devs", "ops", GroupAuthenticated}) {
		t.Errorf("t1 = %+v", a)
	}
	if b := users["t2"]; b == nil || b.Name != "bob" || !slices.Equal(b.Groups, []string{GroupAuthenticated}) {
		t.Errorf("t2 = %+v", b)
	}
	for _, bad := range []string{"t1,alice\n", ",alice,u\n", "t1,,u\n", "t,a,u\nt,b,u\n", "t,\"a,u\n"} {
		if _, err := ParseTokenFile(strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func newSATokens(t *testing.T, now *time.Time, uids map[string]string) *ServiceAccountTokens {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &ServiceAccountTokens{Key: key, Issuer: "https://kubernetes.default.svc.cluster.local",
		Audiences: []string{"https://kubernetes.default.svc.cluster.local"}, Now: func() time.Time { return *now },
		Lookup: func(_ context.Context, ns, name string) (string, error) {
			if uid, ok := uids[ns+"/"+name]; ok {
				return uid, nil
			}
			return "", errors.New("not found")
		}}
}

func TestServiceAccountTokens(t *testing.T) {
	now := time.Now()
	uids := map[string]string{"a/bot": "uid-1"}
	sa := newSATokens(t, &now, uids)
	tok, exp, err := sa.Issue("a", "bot", "uid-1", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if d := exp.Sub(now); d < 59*time.Minute || d > time.Hour {
		t.Errorf("expires in %v", d)
	}
	u, err := sa.Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if u.Name != "system:serviceaccount:a:bot" || u.UID != "uid-1" ||
		!slices.Equal(u.Groups, []string{"system:serviceaccounts", "system:serviceaccounts:a", GroupAuthenticated}) {
		t.Errorf("user %+v", u)
	}

	other, _, _ := sa.Issue("a", "bot", "uid-1", []string{"vault"}, time.Hour)
	if _, err := sa.Verify(context.Background(), other); err == nil {
		t.Error("a token for another audience was accepted")
	}
	otherKey := newSATokens(t, &now, uids)
	forged, _, _ := otherKey.Issue("a", "bot", "uid-1", nil, time.Hour)
	if _, err := sa.Verify(context.Background(), forged); err == nil {
		t.Error("a token signed by another key was accepted")
	}
	if _, err := sa.Verify(context.Background(), tok[:len(tok)-4]+"AAAA"); err == nil {
		t.Error("a token with a changed signature was accepted")
	}
	uids["a/bot"] = "uid-2" // deleted and created again
	if _, err := sa.Verify(context.Background(), tok); err == nil {
		t.Error("a token of a recreated ServiceAccount was accepted")
	}
	uids["a/bot"] = "uid-1"
	now = now.Add(time.Hour + time.Second)
	if _, err := sa.Verify(context.Background(), tok); err == nil {
		t.Error("an expired token was accepted")
	}
}

func selfSigned(t *testing.T, cn string, orgs ...string) *x509.Certificate {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: bigOne(), Subject: pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c
}

func TestAuthenticate(t *testing.T) {
	now := time.Now()
	sa := newSATokens(t, &now, map[string]string{"a/bot": "u"})
	satok, _, _ := sa.Issue("a", "bot", "u", nil, time.Hour)
	a := &Authenticator{AdminTokenHash: HashToken("admin"), LoopbackToken: "loopback", Tokens: map[string]*User{"static": {Name: "s", Groups: []string{GroupAuthenticated}}},
		ServiceAccounts: sa, MemberOrg: "litek8s:members", Anonymous: true, AnonymousPaths: []string{"/readyz"}}
	req := func(token string, cert *x509.Certificate, hdr ...string) *User {
		r := httptest.NewRequest("GET", "/api/v1/pods", nil)
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		if cert != nil {
			r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}}
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Add(hdr[i], hdr[i+1])
		}
		u, err := a.Authenticate(context.Background(), r)
		if err != nil {
			return nil
		}
		return u
	}
	if u := req("admin", nil); u == nil || !u.InGroup(GroupMasters) {
		t.Errorf("admin token: %+v", u)
	}
	if u := req(HashToken("admin"), nil); u != nil {
		t.Errorf("the admin token's hash authenticated: %+v", u)
	}
	if u := req("loopback", nil); u == nil || u.Name != LoopbackUser || !u.InGroup(GroupMasters) {
		t.Errorf("loopback token: %+v", u)
	}
	if u := req("static", nil); u == nil || u.Name != "s" {
		t.Errorf("static token: %+v", u)
	}
	if u := req(satok, nil); u == nil || u.Name != "system:serviceaccount:a:bot" ||
		len(u.Extra[CredentialIDKey]) != 1 || !strings.HasPrefix(u.Extra[CredentialIDKey][0], "JTI=") {
		t.Errorf("ServiceAccount token: %+v, want its credential-id JTI=<jti>", u)
	}
	if u := req("wrong", nil); u != nil {
		t.Errorf("wrong token: %+v", u)
	}
	if u := req("", nil); u == nil || u.Name != Anonymous {
		t.Errorf("no credentials: %+v", u)
	}
	if u := req("", selfSigned(t, "carol", "devs")); u == nil || u.Name != "carol" || !slices.Equal(u.Groups, []string{"devs", GroupAuthenticated}) {
		t.Errorf("client certificate: %+v", u)
	}
	if u := req("", selfSigned(t, "carol", "devs"), RemoteUserHeader, "mallory"); u == nil || u.Name != "carol" {
		t.Errorf("a user's certificate with relay headers: %+v, want carol", u)
	}
	if u := req("", selfSigned(t, "node-1", "litek8s:members"), RemoteUserHeader, "dave", RemoteGroupHeader, "devs",
		RemoteGroupHeader, GroupAuthenticated); u == nil || u.Name != "dave" || !slices.Equal(u.Groups, []string{"devs", GroupAuthenticated}) {
		t.Errorf("relayed by a member: %+v", u)
	}
	// Extras relayed as the follower writes them (authz.go relayUser: path-escaped keys).
	if u := req("", selfSigned(t, "node-1", "litek8s:members"), RemoteUserHeader, "dave",
		RemoteExtraHeaderPrefix+"authentication.kubernetes.io%2Fcredential-id", "JTI=x"); u == nil ||
		!slices.Equal(u.Extra[CredentialIDKey], []string{"JTI=x"}) || len(u.Extra) != 1 {
		t.Errorf("relayed extra: %+v", u)
	}
	if u := req("", nil, RemoteUserHeader, "mallory"); u == nil || u.Name != Anonymous {
		t.Errorf("relay headers without a member certificate: %+v, want anonymous", u)
	}
	a.Anonymous = false
	if u := req("", nil); u != nil {
		t.Errorf("anonymous off: %+v", u)
	}
}

func bigOne() *big.Int { return big.NewInt(1) }
