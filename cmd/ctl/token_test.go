package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member/jointoken"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// An operator's round with join tokens, through a follower: a created
// token joins a member and is listed without its secret; an expired, a
// revoked and a deleted token are refused; the bootstrap token joins until
// revoked; and no member's data dir holds the admin token.
func TestCtlJoinTokens(t *testing.T) {
	c := membertest.StartCluster(t, 2)
	kc := c.Kubeconfig(1)
	leader := c.WaitLeader()
	follower := 1 - leader

	var created struct {
		Token string `json:"token"`
		jointoken.Record
	}
	ctlJSON(t, &created, "--kubeconfig", kc, "token", "create", "--ttl", "1h", "--description", "for m2")
	if created.ID != jointoken.ID(created.Token) || created.Expiration == nil || created.Description != "for m2" {
		t.Fatalf("created %+v", created)
	}
	out, stderr, err := ctl(t.Context(), "--kubeconfig", kc, "token", "list")
	if err != nil {
		t.Fatalf("token list: %v %s", err, stderr)
	}
	bootstrapID := jointoken.ID(membertest.JoinToken)
	for _, want := range []string{created.ID + " ", "for m2", bootstrapID + " ", "(bootstrap)"} {
		if !strings.Contains(out, want) {
			t.Errorf("token list lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, created.Token) || strings.Contains(out, strings.Split(created.Token, ".")[1]) {
		t.Errorf("token list shows the token's secret:\n%s", out)
	}

	if _, err := join(t, c, "m2", follower, created.Token); err != nil {
		t.Fatalf("join with a created token through the follower: %v", err)
	}
	c.WaitMembers(3)

	var short struct{ Token string }
	ctlJSON(t, &short, "--kubeconfig", kc, "token", "create", "--ttl", "1s")
	time.Sleep(1500 * time.Millisecond)
	if _, err := join(t, c, "m3", follower, short.Token); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("join with an expired token: %v, want refused as expired", err)
	}

	if out, stderr, err := ctl(t.Context(), "--kubeconfig", kc, "token", "revoke", created.ID); err != nil ||
		!strings.Contains(out, "revoked") {
		t.Fatalf("revoke %s: %v %s %s", created.ID, err, out, stderr)
	}
	if _, err := join(t, c, "m4", leader, created.Token); err == nil || !strings.Contains(err.Error(), "not this cluster's") {
		t.Errorf("join with a revoked token: %v, want refused", err)
	}
	if _, _, err := ctl(t.Context(), "--kubeconfig", kc, "token", "revoke", "zzzzzz"); err == nil {
		t.Error("revoking a token that does not exist succeeded")
	}

	// the bootstrap token: recorded by the leader, joins until revoked
	if _, stderr, err := ctl(t.Context(), "--kubeconfig", kc, "token", "revoke", membertest.JoinToken); err != nil {
		t.Fatalf("revoke the bootstrap token: %v %s", err, stderr)
	}
	if _, err := join(t, c, "m5", follower, membertest.JoinToken); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("join with the revoked bootstrap token: %v, want refused as revoked", err)
	}
	out, _, _ = ctl(t.Context(), "--kubeconfig", kc, "token", "list")
	if !strings.Contains(out, bootstrapID+"   revoked") {
		t.Errorf("token list does not show the bootstrap token revoked:\n%s", out)
	}

	// members keep hashes: the admin token is in no file of any data dir
	for i := range c.N() {
		dir := c.Config(i).DataDir
		if dir == "" {
			continue
		}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err == nil && bytes.Contains(b, []byte(c.Token())) {
				t.Errorf("%s holds the admin token", p)
			}
			return nil
		})
	}
}
