package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

func writeEncryptionConfig(t *testing.T, path string, keys ...string) {
	t.Helper()
	y := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys:\n"
	for _, k := range keys {
		y += fmt.Sprintf("      - {name: %s, secret: %s}\n", k, base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%-32s", k))))
	}
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
}

// `ctl secrets reencrypt` after a new first key: it rewrites the Secrets
// stored with the old key and snapshots every member; run again it has
// nothing to do.
func TestCtlSecretsReencrypt(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "enc.yaml")
	writeEncryptionConfig(t, conf, "key1")
	c := membertest.StartCluster(t, 2, membertest.FastRaft, func(cfg *member.Config) { cfg.EncryptionProviderConfig = conf })
	ctx := t.Context()
	for i := range 3 {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", i)}, StringData: map[string]string{"v": "x"}}
		if _, err := c.Clientset(0).CoreV1().Secrets("default").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	writeEncryptionConfig(t, conf, "key2", "key1")
	for i := range c.N() {
		c.Stop(i)
		c.Restart(i)
	}
	c.WaitMembers(2)
	all, err := c.Clientset(0).CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := c.Kubeconfig(0)
	var res adminapi.ReencryptResult
	ctlJSON(t, &res, "secrets", "reencrypt", "--kubeconfig", kc, "--server", c.URL(c.Follower()))
	if res.Rewritten["secrets"] != len(all.Items) || len(res.Snapshots) != 2 || res.Index == 0 {
		t.Fatalf("reencrypt: %+v, want %d secrets and 2 snapshots", res, len(all.Items))
	}
	out, stderr, err := ctl(ctx, "secrets", "reencrypt", "--kubeconfig", kc)
	if err != nil || !strings.Contains(out, "no object needed rewriting") || !strings.Contains(out, "m0: snapshot at index") {
		t.Fatalf("second reencrypt: %v\n%s%s", err, out, stderr)
	}
}
