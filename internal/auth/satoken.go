package auth

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
)

// ServiceAccountTokens issues and verifies bound ServiceAccount tokens:
// ES256 JWTs with kube's claims (iss, sub, aud, exp, iat, nbf and the
// kubernetes.io claim naming the namespace and the ServiceAccount with its
// UID). A token is valid while it has not expired, names one of the
// accepted audiences, and its ServiceAccount still exists with that UID.
type ServiceAccountTokens struct {
	// Key signs and verifies (every member holds the same key).
	Key *ecdsa.PrivateKey
	// Issuer is the iss claim (kube: https://kubernetes.default.svc.cluster.local).
	Issuer string
	// Audiences are those a token must name one of; tokens requested
	// without audiences get them all.
	Audiences []string
	// Lookup returns the UID of ServiceAccount ns/name (an error if it
	// does not exist).
	Lookup func(ctx context.Context, ns, name string) (uid string, err error)
	// Now is the clock.
	Now func() time.Time
}

// CredentialIDKey is the user extra naming the credential a request
// authenticated with (kube's: "JTI=<jti>" for a ServiceAccount token).
const CredentialIDKey = "authentication.kubernetes.io/credential-id"

// kubeClaims is the "kubernetes.io" claim.
type kubeClaims struct {
	Namespace      string `json:"namespace"`
	ServiceAccount ref    `json:"serviceaccount"`
	Pod            *ref   `json:"pod,omitempty"`
	Secret         *ref   `json:"secret,omitempty"`
}

type ref struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

type privateClaims struct {
	Kubernetes kubeClaims `json:"kubernetes.io"`
}

// Issue signs a token for ServiceAccount ns/name (uid) valid for ttl and
// the given audiences (none: Audiences).
func (s *ServiceAccountTokens) Issue(ns, name, uid string, audiences []string, ttl time.Duration) (string, time.Time, error) {
	if len(audiences) == 0 {
		audiences = s.Audiences
	}
	kid, err := s.KeyID()
	if err != nil {
		return "", time.Time{}, err
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: s.Key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		return "", time.Time{}, err
	}
	now := s.Now().Truncate(time.Second)
	exp := now.Add(ttl)
	std := jwt.Claims{Issuer: s.Issuer, Subject: ServiceAccountUser(ns, name), Audience: jwt.Audience(audiences),
		Expiry: jwt.NewNumericDate(exp), IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now),
		ID: uuid.NewString()} // jti: the user's credential-id, as kube's tokens carry
	priv := privateClaims{Kubernetes: kubeClaims{Namespace: ns, ServiceAccount: ref{Name: name, UID: uid}}}
	tok, err := jwt.Signed(sig).Claims(std).Claims(priv).Serialize()
	return tok, exp, err
}

// Verify returns the user of a token, or an error.
func (s *ServiceAccountTokens) Verify(ctx context.Context, tok string) (*User, error) {
	u, _, err := s.VerifyFor(ctx, tok, nil)
	return u, err
}

// VerifyFor returns the user of a token that names one of audiences (nil:
// Audiences) and those of audiences it names.
func (s *ServiceAccountTokens) VerifyFor(ctx context.Context, tok string, audiences []string) (*User, []string, error) {
	if audiences == nil {
		audiences = s.Audiences
	}
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return nil, nil, err
	}
	var std jwt.Claims
	var priv privateClaims
	if err := parsed.Claims(&s.Key.PublicKey, &std, &priv); err != nil {
		return nil, nil, err
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Issuer: s.Issuer, AnyAudience: jwt.Audience(audiences),
		Time: s.Now()}, 0); err != nil {
		return nil, nil, err
	}
	if std.Expiry == nil {
		return nil, nil, errors.New("auth: token without expiry")
	}
	k := priv.Kubernetes
	if k.Namespace == "" || k.ServiceAccount.Name == "" || std.Subject != ServiceAccountUser(k.Namespace, k.ServiceAccount.Name) {
		return nil, nil, errors.New("auth: token does not name its ServiceAccount")
	}
	uid, err := s.Lookup(ctx, k.Namespace, k.ServiceAccount.Name)
	if err != nil {
		return nil, nil, fmt.Errorf("auth: ServiceAccount %s/%s: %w", k.Namespace, k.ServiceAccount.Name, err)
	}
	if uid != k.ServiceAccount.UID {
		return nil, nil, fmt.Errorf("auth: ServiceAccount %s/%s was recreated (UID %s, token for %s)", k.Namespace,
			k.ServiceAccount.Name, uid, k.ServiceAccount.UID)
	}
	var named []string
	for _, a := range audiences {
		if std.Audience.Contains(a) {
			named = append(named, a)
		}
	}
	u := serviceAccountUser(k.Namespace, k.ServiceAccount.Name, uid)
	if std.ID != "" {
		u.Extra = map[string][]string{CredentialIDKey: {"JTI=" + std.ID}}
	}
	return u, named, nil
}
