package jointoken

import (
	"errors"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/auth"
)

func TestVerify(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	bootstrap := "a-token-given-at-bootstrap"
	shaped, err := New() // a bootstrap token in New's shape
	if err != nil || !tokenRE.MatchString(shaped) {
		t.Fatalf("New = %q, %v", shaped, err)
	}
	created, _ := New()
	expired, _ := New()
	fromBackup := "the bootstrap token of a backup's cluster"
	records := map[string]*Record{}
	add := func(r *Record) { records[r.ID] = r }
	add(NewRecord(created, time.Hour, "", now))
	add(NewRecord(expired, time.Minute, "", now.Add(-time.Hour)))
	add(&Record{ID: InitialID(auth.HashToken(fromBackup)), Hash: auth.HashToken(fromBackup), Initial: true})
	lookup := func(id string) (*Record, error) { return records[id], nil }

	tests := []struct {
		name, token, initialHash string
		revokeInitial            bool
		want                     error
	}{
		{"the bootstrap token, not recorded yet", bootstrap, auth.HashToken(bootstrap), false, nil},
		{"the bootstrap token, revoked", bootstrap, auth.HashToken(bootstrap), true, ErrRevoked},
		{"a bootstrap token in New's shape", shaped, auth.HashToken(shaped), false, nil},
		{"a bootstrap token in New's shape, revoked", shaped, auth.HashToken(shaped), true, ErrRevoked},
		{"a created token", created, auth.HashToken(bootstrap), false, nil},
		{"an expired token", expired, auth.HashToken(bootstrap), false, ErrExpired},
		{"a wrong secret for a created token's ID", created[:7] + "0000000000000000", auth.HashToken(bootstrap), false, ErrUnknown},
		{"the bootstrap token of another cluster (a restored backup's)", fromBackup, auth.HashToken(bootstrap), false, ErrUnknown},
		{"unknown", "nope", auth.HashToken(bootstrap), false, ErrUnknown},
		{"empty", "", auth.HashToken(bootstrap), false, ErrUnknown},
		{"the hash itself", auth.HashToken(bootstrap), auth.HashToken(bootstrap), false, ErrUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.revokeInitial {
				r := &Record{ID: InitialID(tt.initialHash), Hash: tt.initialHash, Initial: true, Revoked: true}
				records[r.ID] = r
				defer delete(records, r.ID)
			}
			if err := Verify(tt.token, tt.initialHash, now, lookup); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestRecordSecretRoundTrip(t *testing.T) {
	tok, _ := New()
	r := NewRecord(tok, 90*time.Minute, "for node-4", time.Now())
	s := r.Secret()
	if s.Namespace != Namespace || s.Type != SecretType || s.Name != SecretName(ID(tok)) {
		t.Fatalf("secret %s/%s type %s", s.Namespace, s.Name, s.Type)
	}
	for k, v := range s.Data {
		if string(v) == tok || string(v) == tok[7:] {
			t.Errorf("the secret's %s holds the token", k)
		}
	}
	got, err := FromSecret(s)
	if err != nil || got.ID != r.ID || got.Hash != r.Hash || !got.Expiration.Equal(*r.Expiration) || got.Description != r.Description {
		t.Errorf("FromSecret = %+v, %v; want %+v", got, err, r)
	}
	s.Type = "Opaque"
	if _, err := FromSecret(s); err == nil {
		t.Error("FromSecret took an Opaque Secret")
	}
}
