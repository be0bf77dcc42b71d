package member_test

import (
	"encoding/json"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// Service account issuer discovery through client-go on a real member:
// the discovery document names the issuer and its key set, and a token
// from the TokenRequest API verifies with that key set alone (what an
// OIDC relying party does).
func TestServiceAccountIssuerDiscovery(t *testing.T) {
	c := membertest.StartCluster(t, 1, membertest.FastRaft)
	cs := c.PlainClientset(0)
	ctx := t.Context()
	const ns = "oidc"
	createNamespace(t, cs, ns)
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "app"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "app", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/.well-known/openid-configuration").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Issuer      string   `json:"issuer"`
		JWKSURI     string   `json:"jwks_uri"`
		SigningAlgs []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Issuer != "https://kubernetes.default.svc.cluster.local" || doc.JWKSURI != doc.Issuer+"/openid/v1/jwks" ||
		len(doc.SigningAlgs) != 1 || doc.SigningAlgs[0] != "ES256" {
		t.Fatalf("discovery document %s", raw)
	}
	raw, err = cs.Discovery().RESTClient().Get().AbsPath("/openid/v1/jwks").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &keys); err != nil || len(keys.Keys) != 1 || !keys.Keys[0].IsPublic() {
		t.Fatalf("key set %s: %v", raw, err)
	}

	tok, err := jwt.ParseSigned(tr.Status.Token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	kid := tok.Headers[0].KeyID
	found := keys.Key(kid)
	if kid == "" || len(found) != 1 {
		t.Fatalf("token kid %q not in the key set %s", kid, raw)
	}
	var claims jwt.Claims
	if err := tok.Claims(found[0].Key, &claims); err != nil {
		t.Fatalf("token does not verify with the published key: %v", err)
	}
	if err := claims.Validate(jwt.Expected{Issuer: doc.Issuer, AnyAudience: jwt.Audience{"vault"},
		Subject: "system:serviceaccount:oidc:app"}); err != nil {
		t.Fatal(err)
	}
}
