package member

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/litek8s/litek8s/internal/kv"
	"github.com/litek8s/litek8s/internal/member/jointoken"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// verifyJoinToken decides whether a joiner's token opens the join secrets
// (raftstore.Config.VerifyJoinToken): the cluster's bootstrap token by the
// hash every member keeps, unless revoked, and the tokens of `ctl token
// create` by their records, read at the leader's read index so that a
// token created a moment ago on another member works here.
func (m *Member) verifyJoinToken(ctx context.Context, token string) error {
	err := jointoken.Verify(token, m.sec.JoinTokenHash, time.Now(), func(id string) (*jointoken.Record, error) {
		return m.joinTokenRecord(ctx, id)
	})
	switch {
	case errors.Is(err, jointoken.ErrUnknown), errors.Is(err, jointoken.ErrExpired), errors.Is(err, jointoken.ErrRevoked):
		m.log.Warn("join refused", "tokenID", jointoken.ID(token), "reason", err)
		return fmt.Errorf("%w: %w", raftstore.ErrBadJoinToken, err)
	case err != nil:
		return err
	}
	m.log.Info("join token accepted", "tokenID", jointoken.ID(token))
	return nil
}

// joinTokenRecord reads the record of token id (nil when there is none).
func (m *Member) joinTokenRecord(ctx context.Context, id string) (*jointoken.Record, error) {
	key := kv.Key{Resource: "secrets", Namespace: jointoken.Namespace, Name: jointoken.SecretName(id)}
	obj, _, err := m.store.Get(ctx, key, true)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var s corev1.Secret
	if err := json.Unmarshal(obj.Raw, &s); err != nil {
		return nil, err
	}
	if s.Type != jointoken.SecretType {
		return nil, nil // someone else's Secret of that name
	}
	return jointoken.FromSecret(&s)
}

// recordInitialJoinToken makes the leader record the token the cluster was
// bootstrapped with (by its hash) unless it is recorded already, revoked
// or not, so that `ctl token list` shows it and `ctl token revoke` can
// revoke it.
func (m *Member) recordInitialJoinToken(ctx context.Context) error {
	h := m.sec.JoinTokenHash
	if h == "" {
		return nil
	}
	rec := &jointoken.Record{ID: jointoken.InitialID(h), Hash: h, Initial: true,
		Description: "the token the cluster was bootstrapped with"}
	return m.api.EnsureObject(ctx, "v1", "secrets", rec.Secret())
}

// loopbackToken is a random token for the member's own clients (its
// controllers), valid in this process only.
func loopbackToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
