package jointoken

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/auth"
)

// Where and how records are kept.
const (
	Namespace  = "kube-system"
	SecretType = corev1.SecretType("litek8s.io/join-token")
	namePrefix = "litek8s-join-token-"

	keyHash        = "token-hash" // auth.HashToken of the token
	keyExpiration  = "expiration" // RFC 3339; absent: never
	keyDescription = "description"
	keyRevoked     = "revoked" // "true": refused (the bootstrap token's revocation)
	keyInitial     = "initial" // "true": the token the cluster was bootstrapped with
)

// tokenRE is the shape of the tokens New makes (kubeadm's bootstrap token
// shape): a public ID, a dot, a secret.
var (
	tokenRE = regexp.MustCompile(`^([a-z0-9]{6})\.([a-z0-9]{16})$`)
	idRE    = regexp.MustCompile(`^[a-z0-9]{6}$`)
)

// New makes a token: "<id>.<secret>" of lowercase letters and digits.
func New() (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 22)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)] // 256 % 36 = 4: a negligible bias
	}
	return string(b[:6]) + "." + string(b[6:]), nil
}

// ID is a token's public name: the part before the dot of New's tokens,
// the first 6 hex digits of its SHA-256 for any other (a token given at
// bootstrap with --join-token).
func ID(token string) string {
	if m := tokenRE.FindStringSubmatch(token); m != nil {
		return m[1]
	}
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:3])
}

// InitialID is the ID under which the token the cluster was bootstrapped
// with is recorded: the first 6 hex digits of its hash (auth.HashToken),
// which every member knows, whatever the token's shape.
func InitialID(hash string) string {
	h := strings.TrimPrefix(hash, "sha256:")
	if len(h) < 6 {
		return ""
	}
	return h[:6]
}

// SecretName is the name of the record of the token with id.
func SecretName(id string) string { return namePrefix + id }

// ValidID reports whether id can name a record.
func ValidID(id string) bool { return idRE.MatchString(id) }

// Record is what the cluster knows of one join token.
type Record struct {
	ID          string     `json:"id"`
	Hash        string     `json:"-"`
	Expiration  *time.Time `json:"expiration,omitempty"`
	Description string     `json:"description,omitempty"`
	Revoked     bool       `json:"revoked,omitempty"`
	Initial     bool       `json:"initial,omitempty"`
	Created     time.Time  `json:"created"`
}

// Expired reports whether the record's token has expired at now.
func (r *Record) Expired(now time.Time) bool {
	return r.Expiration != nil && !now.Before(*r.Expiration)
}

// NewRecord records token: valid for ttl (0: until revoked).
func NewRecord(token string, ttl time.Duration, description string, now time.Time) *Record {
	r := &Record{ID: ID(token), Hash: auth.HashToken(token), Description: description, Created: now}
	if ttl > 0 {
		exp := now.Add(ttl).UTC().Truncate(time.Second)
		r.Expiration = &exp
	}
	return r
}

// Secret is the record as the Secret that keeps it.
func (r *Record) Secret() *corev1.Secret {
	data := map[string][]byte{keyHash: []byte(r.Hash)}
	if r.Expiration != nil {
		data[keyExpiration] = []byte(r.Expiration.UTC().Format(time.RFC3339))
	}
	if r.Description != "" {
		data[keyDescription] = []byte(r.Description)
	}
	if r.Revoked {
		data[keyRevoked] = []byte("true")
	}
	if r.Initial {
		data[keyInitial] = []byte("true")
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: SecretName(r.ID), Namespace: Namespace},
		Type:       SecretType, Data: data,
	}
}

// FromSecret reads a record; an error for a Secret that is not one.
func FromSecret(s *corev1.Secret) (*Record, error) {
	id, ok := strings.CutPrefix(s.Name, namePrefix)
	if s.Type != SecretType || !ok || s.Namespace != Namespace {
		return nil, fmt.Errorf("jointoken: %s/%s is not a join token record", s.Namespace, s.Name)
	}
	r := &Record{ID: id, Hash: string(s.Data[keyHash]), Description: string(s.Data[keyDescription]),
		Revoked: string(s.Data[keyRevoked]) == "true", Initial: string(s.Data[keyInitial]) == "true",
		Created: s.CreationTimestamp.Time}
	if e := s.Data[keyExpiration]; len(e) > 0 {
		t, err := time.Parse(time.RFC3339, string(e))
		if err != nil {
			return nil, fmt.Errorf("jointoken: %s: bad expiration %q", s.Name, e)
		}
		r.Expiration = &t
	}
	return r, nil
}

// Errors of Verify.
var (
	ErrUnknown = errors.New("the join token is not this cluster's")
	ErrExpired = errors.New("the join token has expired")
	ErrRevoked = errors.New("the join token has been revoked")
)

// Verify decides whether token may join: initialHash is the hash of the
// token the cluster was bootstrapped with, lookup reads the record of an
// ID (nil, nil when there is none).
func Verify(token, initialHash string, now time.Time, lookup func(id string) (*Record, error)) error {
	if token == "" {
		return ErrUnknown
	}
	rec, err := lookup(ID(token))
	if err != nil {
		return err
	}
	if rec != nil && auth.TokenMatches(token, rec.Hash) {
		switch {
		case rec.Revoked:
			return ErrRevoked
		case rec.Expired(now):
			return ErrExpired
		case rec.Initial && !auth.TokenMatches(token, initialHash):
			// the bootstrap token of the cluster a backup came from
			// (ctl snapshot restore makes a cluster with new secrets)
			return ErrUnknown
		}
		return nil
	}
	if !auth.TokenMatches(token, initialHash) {
		return ErrUnknown
	}
	if id := InitialID(initialHash); id != ID(token) { // a bootstrap token in New's shape
		if rec, err = lookup(id); err != nil {
			return err
		}
		if rec != nil && rec.Revoked && auth.TokenMatches(token, rec.Hash) {
			return ErrRevoked
		}
	}
	return nil // the bootstrap token, recorded or not yet
}
