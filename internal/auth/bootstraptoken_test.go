package auth

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestBootstrapTokens(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	secret := func(mutate func(*corev1.Secret)) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "bootstrap-token-abcdef"},
			Type: "bootstrap.kubernetes.io/token", Data: map[string][]byte{"token-id": []byte("abcdef"),
				"token-secret": []byte("0123456789abcdef"), "usage-bootstrap-authentication": []byte("true"),
				"expiration": []byte(now.Add(time.Hour).Format(time.RFC3339))}}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	const tok = "abcdef.0123456789abcdef"
	for _, c := range []struct {
		name   string
		tok    string
		secret *corev1.Secret
		groups []string // nil: refused
	}{
		{"valid", tok, secret(nil), []string{GroupBootstrappers, GroupAuthenticated}},
		{"extra groups", tok, secret(func(s *corev1.Secret) { s.Data["auth-extra-groups"] = []byte("system:bootstrappers:workers") }),
			[]string{GroupBootstrappers, "system:bootstrappers:workers", GroupAuthenticated}},
		{"bad extra group", tok, secret(func(s *corev1.Secret) { s.Data["auth-extra-groups"] = []byte("system:masters") }), nil},
		{"wrong secret", "abcdef.0123456789abcdee", secret(nil), nil},
		{"expired", tok, secret(func(s *corev1.Secret) { s.Data["expiration"] = []byte(now.Add(-time.Second).Format(time.RFC3339)) }), nil},
		{"not for authentication", tok, secret(func(s *corev1.Secret) { delete(s.Data, "usage-bootstrap-authentication") }), nil},
		{"wrong type", tok, secret(func(s *corev1.Secret) { s.Type = corev1.SecretTypeOpaque }), nil},
		{"id mismatch", tok, secret(func(s *corev1.Secret) { s.Data["token-id"] = []byte("ghijkl") }), nil},
		{"being deleted", tok, secret(func(s *corev1.Secret) { s.DeletionTimestamp = &metav1.Time{Time: now} }), nil},
		{"no secret", tok, nil, nil},
		{"not a bootstrap token", "abcdef0123456789abcdef", secret(nil), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &BootstrapTokens{Now: func() time.Time { return now },
				Lookup: func(_ context.Context, name string) (*corev1.Secret, error) {
					if c.secret == nil || name != c.secret.Name {
						return nil, errors.New("not found")
					}
					return c.secret, nil
				}}
			u, err := b.Verify(t.Context(), c.tok)
			if c.groups == nil {
				if err == nil {
					t.Fatalf("Verify = %+v, want an error", u)
				}
				return
			}
			if err != nil || u.Name != "system:bootstrap:abcdef" || !slices.Equal(u.Groups, c.groups) {
				t.Fatalf("Verify = %+v, %v; want system:bootstrap:abcdef in %v", u, err, c.groups)
			}
		})
	}
}
