package datadir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litek8s/litek8s/internal/auth"
)

// A data dir from before the hashes (a plain tls/admin-token, no
// join-token file: the admin token joined) loads with the hashes, and the
// plain admin token is gone from disk.
func TestLoadSecretsConvertsPlainAdminToken(t *testing.T) {
	dir := t.TempDir()
	s, err := NewSecrets("", "j", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tls := TLSDir(dir)
	if err := os.MkdirAll(tls, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]string{"ca.crt": string(s.CACert), "ca.key": string(s.CAKey), "admin-token": "old-admin"} {
		if err := os.WriteFile(filepath.Join(tls, name), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := LoadSecrets(dir)
	if err != nil || !ok {
		t.Fatalf("LoadSecrets: %v %v", ok, err)
	}
	if !auth.TokenMatches("old-admin", got.AdminTokenHash) || !auth.TokenMatches("old-admin", got.JoinTokenHash) {
		t.Errorf("hashes %q %q do not verify the old admin token", got.AdminTokenHash, got.JoinTokenHash)
	}
	if _, err := os.Stat(filepath.Join(tls, "admin-token")); !os.IsNotExist(err) {
		t.Errorf("the plain admin token is still on disk: %v", err)
	}
	again, _, err := LoadSecrets(dir)
	if err != nil || again.AdminTokenHash != got.AdminTokenHash || again.JoinTokenHash != got.JoinTokenHash {
		t.Errorf("second load: %+v %v", again, err)
	}
}

// What a joiner receives holds no plain token, and what it saves neither.
func TestJoinSecretsHoldNoPlainToken(t *testing.T) {
	s, err := NewSecrets("the-admin-token", "the-join-token", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "the-admin-token") || strings.Contains(string(b), "the-join-token") {
		t.Fatalf("join secrets hold a plain token: %s", b)
	}
	j, err := Unmarshal(b)
	if err != nil || j.AdminTokenHash != s.AdminTokenHash || j.JoinTokenHash != s.JoinTokenHash || j.JoinToken != "" {
		t.Fatalf("Unmarshal = %+v, %v", j, err)
	}
	dir := t.TempDir()
	if err := j.Save(dir); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(TLSDir(dir))
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(TLSDir(dir), e.Name()))
		if strings.Contains(string(b), "the-admin-token") || strings.Contains(string(b), "the-join-token") {
			t.Errorf("%s holds a plain token", e.Name())
		}
		if e.Name() == "join-token" {
			t.Error("a joiner wrote a join-token file")
		}
	}
	// a member before the hashes sent plain tokens: hashed on receipt
	old, err := Unmarshal([]byte(`{"caCert":"","caKey":"","token":"a","joinToken":"b"}`))
	if err != nil || !auth.TokenMatches("a", old.AdminTokenHash) || !auth.TokenMatches("b", old.JoinTokenHash) || old.Token != "" {
		t.Errorf("old join secrets: %+v %v", old, err)
	}
}
