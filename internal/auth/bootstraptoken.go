package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapsecrets "k8s.io/cluster-bootstrap/util/secrets"
)

// BootstrapTokens authenticates bootstrap tokens (<id>.<secret>) as kube's
// bootstrap token authenticator does: the Secret kube-system/bootstrap-token-<id>
// of type bootstrap.kubernetes.io/token must hold the same token-id and
// token-secret, allow usage-bootstrap-authentication, not be expired nor
// being deleted. Its user is system:bootstrap:<id> in system:bootstrappers
// and the Secret's auth-extra-groups.
type BootstrapTokens struct {
	// Lookup returns Secret kube-system/<name> (an error if there is none).
	Lookup func(ctx context.Context, name string) (*corev1.Secret, error)
	// Now is the clock.
	Now func() time.Time
}

// errBootstrapToken is a bootstrap token that authenticates nobody.
var errBootstrapToken = errors.New("auth: invalid bootstrap token")

// IsBootstrapToken reports whether tok has a bootstrap token's form.
func IsBootstrapToken(tok string) bool { return bootstraputil.IsValidBootstrapToken(tok) }

// Verify returns the user of bootstrap token tok.
func (b *BootstrapTokens) Verify(ctx context.Context, tok string) (*User, error) {
	if !bootstraputil.IsValidBootstrapToken(tok) {
		return nil, errBootstrapToken
	}
	id, secret, _ := strings.Cut(tok, ".")
	s, err := b.Lookup(ctx, bootstraputil.BootstrapTokenSecretName(id))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBootstrapToken, err)
	}
	switch {
	case s.DeletionTimestamp != nil, s.Type != bootstrapapi.SecretTypeBootstrapToken:
		return nil, errBootstrapToken
	case subtle.ConstantTimeCompare([]byte(bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenSecretKey)), []byte(secret)) != 1:
		return nil, errBootstrapToken
	case bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenIDKey) != id:
		return nil, errBootstrapToken
	case bootstrapsecrets.HasExpired(s, b.Now()):
		return nil, fmt.Errorf("%w: expired", errBootstrapToken)
	case bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenUsageAuthentication) != "true":
		return nil, fmt.Errorf("%w: not for authentication", errBootstrapToken)
	}
	groups, err := bootstrapsecrets.GetGroups(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBootstrapToken, err)
	}
	return &User{Name: BootstrapUserPrefix + id, Groups: append(groups, GroupAuthenticated)}, nil
}
