package auth

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"

	jose "github.com/go-jose/go-jose/v4"
)

// Service account issuer discovery (OpenID Connect), as kube-apiserver
// serves it: /.well-known/openid-configuration names the issuer and the
// JWKS, and /openid/v1/jwks holds the public key that verifies the
// tokens, so that a relying party (a cloud's workload identity, Vault's
// JWT auth, an OIDC library in a pod) can check a ServiceAccount token
// without calling TokenReview.

// JWKSPath is where the key set is served.
const JWKSPath = "/openid/v1/jwks"

// KeyID is the kid of the signing key: the unpadded base64url SHA-256 of
// its public key's DER, as kube computes it.
func (s *ServiceAccountTokens) KeyID() (string, error) {
	der, err := x509.MarshalPKIXPublicKey(&s.Key.PublicKey)
	if err != nil {
		return "", fmt.Errorf("auth: service account key: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// DiscoveryDocument is the OpenID provider configuration: the issuer,
// the key set at the issuer's JWKSPath, and kube's fixed claims.
func (s *ServiceAccountTokens) DiscoveryDocument() ([]byte, error) {
	return json.Marshal(struct {
		Issuer        string   `json:"issuer"`
		JWKSURI       string   `json:"jwks_uri"`
		ResponseTypes []string `json:"response_types_supported"`
		SubjectTypes  []string `json:"subject_types_supported"`
		SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
	}{s.Issuer, s.Issuer + JWKSPath, []string{"id_token"}, []string{"public"}, []string{string(jose.ES256)}})
}

// KeySet is the JSON Web Key Set of the public signing key.
func (s *ServiceAccountTokens) KeySet() ([]byte, error) {
	kid, err := s.KeyID()
	if err != nil {
		return nil, err
	}
	return json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &s.Key.PublicKey, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"}}})
}
