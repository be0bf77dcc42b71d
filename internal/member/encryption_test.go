package member_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

const (
	secretValue = "litek8s-distinctive-VALUE-4217"
	cmValue     = "configmap-plain-VALUE-9931"
)

// encryptionConfig writes an EncryptionConfiguration for secrets with
// aesgcm keys (name → 32-byte secret), first encrypting.
func encryptionConfig(t *testing.T, path string, keys ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys:\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "      - name: %s\n        secret: %s\n", k, base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%-32s", k))))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// filesHolding returns the files under dir (tls/ aside) that contain any
// of needles.
func filesHolding(t *testing.T, dir string, needles ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				out = append(out, p)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// backup is `ctl snapshot save`: GET /admin/v1/snapshot from member i.
func backup(t *testing.T, c *membertest.Cluster, i int) []byte {
	t.Helper()
	code, b := admin(t, c, adminCall{member: i, method: http.MethodGet, path: adminapi.PathSnapshot})
	if code != http.StatusOK {
		t.Fatalf("backup: %d %s", code, b)
	}
	return b
}

func secretOf(name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"v": []byte(secretValue)}}
}

// readsEverySecret checks that every member running serves every Secret
// with its value.
func readsEverySecret(t *testing.T, c *membertest.Cluster, names ...string) {
	t.Helper()
	for i := range c.N() {
		if c.Member(i) == nil {
			continue
		}
		membertest.Eventually(t, 10*time.Second, func() error {
			for _, n := range names {
				s, err := c.Clientset(i).CoreV1().Secrets("default").Get(t.Context(), n, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if string(s.Data["v"]) != secretValue {
					return fmt.Errorf("member %d: secret %s holds %q", i, n, s.Data["v"])
				}
			}
			return nil
		})
	}
}

func kubectl(t *testing.T, kubeconfig, stdin string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// With an EncryptionConfiguration for secrets, a Secret's value is in no
// file of any member's data dir (the Raft log's segments, Raft snapshots) nor in a backup,
// while kubectl shows it unchanged and a ConfigMap stays plain; a member
// joining through a snapshot install reads it. Key rotation: a new first
// key and a rolling restart, an unchanged `kubectl replace` and `ctl
// secrets reencrypt` rewrite the Secrets, then the old key is removed and
// every Secret still reads; a member without the key refuses to start.
func TestSecretsEncryptedAtRest(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl not on PATH")
	}
	conf := filepath.Join(t.TempDir(), "encryption.yaml")
	encryptionConfig(t, conf, "key1")
	c := membertest.StartCluster(t, 3, membertest.FastRaft, func(cfg *member.Config) {
		cfg.EncryptionProviderConfig = conf
		cfg.Store.TrailingLogs = 4 // a joiner gets a snapshot
	})
	ctx := t.Context()
	cs := c.Clientset(0)
	for _, n := range []string{"top", "replaced", "untouched"} {
		if _, err := cs.CoreV1().Secrets("default").Create(ctx, secretOf(n), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, configMap("plain", map[string]string{"v": cmValue}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f := c.Follower()
	if got := kubectl(t, c.Kubeconfig(f), "", "get", "secret", "top", "-o", "jsonpath={.data.v}"); got != base64.StdEncoding.EncodeToString([]byte(secretValue)) {
		t.Fatalf("kubectl get secret through a follower: %q", got)
	}
	for i := range c.N() {
		if err := c.Member(i).Store().Snapshot(); err != nil {
			t.Fatalf("snapshot on member %d: %v", i, err)
		}
	}
	secretNeedles := []string{secretValue, base64.StdEncoding.EncodeToString([]byte(secretValue))}
	checkAtRest := func(key string) {
		t.Helper()
		// Writes after the snapshots, so that every member's log holds
		// them whatever it compacted: a Secret and a ConfigMap.
		l := c.WaitLeader()
		if _, err := c.Clientset(l).CoreV1().Secrets("default").Create(ctx, secretOf("probe-"+key), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Clientset(l).CoreV1().ConfigMaps("default").Create(ctx, configMap("probe-"+key, map[string]string{"v": cmValue}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		readsEverySecret(t, c, "probe-"+key)
		membertest.Eventually(t, 10*time.Second, func() error {
			for i := range c.N() {
				if _, err := c.Clientset(i).CoreV1().ConfigMaps("default").Get(ctx, "probe-"+key, metav1.GetOptions{ResourceVersion: "0"}); err != nil {
					return err
				}
			}
			return nil
		})
		if files := filesHolding(t, c.Dir(), secretNeedles...); len(files) > 0 {
			t.Fatalf("the Secret's value is on disk in %v", files)
		}
		for i := range c.N() {
			if c.Member(i) == nil {
				continue
			}
			dir := c.Config(i).DataDir
			for _, want := range []string{".wal", "state.bin"} { // a log segment, a snapshot
				if !hasSuffixIn(filesHolding(t, dir, "k8s:enc:aesgcm:v1:"+key+":"), want) {
					t.Errorf("member %d: no %s holds ciphertext of %s", i, want, key)
				}
				if !hasSuffixIn(filesHolding(t, dir, cmValue), want) {
					t.Errorf("member %d: the ConfigMap's value is not plain in %s", i, want)
				}
			}
		}
		b := backup(t, c, f)
		if bytes.Contains(b, []byte(secretNeedles[0])) || bytes.Contains(b, []byte(secretNeedles[1])) {
			t.Fatal("the Secret's value is in a backup")
		}
		if !bytes.Contains(b, []byte("k8s:enc:aesgcm:v1:"+key+":")) || !bytes.Contains(b, []byte(cmValue)) {
			t.Fatal("the backup holds neither the Secret's ciphertext nor the ConfigMap")
		}
	}
	checkAtRest("key1")

	// A member joining after the log was compacted gets the snapshot.
	jcfg := c.Config(0)
	jcfg.ID, jcfg.DataDir, jcfg.APIAddr, jcfg.Store.RaftAddr = "m3", filepath.Join(c.Dir(), "m3"), "127.0.0.1:0", "127.0.0.1:0"
	jcfg.Join, jcfg.JoinToken = c.URL(c.WaitLeader()), membertest.JoinToken
	c.Add(jcfg)
	c.WaitMembers(4)
	readsEverySecret(t, c, "top", "replaced", "untouched")
	if s := c.Member(3).Store().Stats(); s["last_snapshot_index"] == "0" {
		t.Fatalf("the joiner caught up without a snapshot install: %v", s)
	}

	// Rotation: key2 first, key1 still readable; every member restarts.
	encryptionConfig(t, conf, "key2", "key1")
	for i := range c.N() {
		c.Stop(i)
		c.Restart(i)
		c.WaitMembers(4)
	}
	readsEverySecret(t, c, "top", "replaced", "untouched")
	l := c.WaitLeader()
	// An unchanged replace of a Secret stored with key1 is written (kube's
	// stale read); of one already stored with key2 it is not.
	before, err := c.Clientset(l).CoreV1().Secrets("default").Get(ctx, "replaced", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	js := kubectl(t, c.Kubeconfig(l), "", "get", "secret", "replaced", "-o", "json")
	kubectl(t, c.Kubeconfig(l), js, "replace", "-f", "-")
	after, err := c.Clientset(l).CoreV1().Secrets("default").Get(ctx, "replaced", metav1.GetOptions{})
	if err != nil || after.ResourceVersion == before.ResourceVersion {
		t.Fatalf("an unchanged replace of a stale Secret was not written: rv %s → %s, %v", before.ResourceVersion, after.ResourceVersion, err)
	}
	js = kubectl(t, c.Kubeconfig(l), "", "get", "secret", "replaced", "-o", "json")
	kubectl(t, c.Kubeconfig(l), js, "replace", "-f", "-")
	again, err := c.Clientset(l).CoreV1().Secrets("default").Get(ctx, "replaced", metav1.GetOptions{})
	if err != nil || again.ResourceVersion != after.ResourceVersion {
		t.Fatalf("an unchanged replace of a current Secret was written: rv %s → %s, %v", after.ResourceVersion, again.ResourceVersion, err)
	}
	// ctl secrets reencrypt, through a follower: the other two Secrets.
	code, b := admin(t, c, adminCall{member: c.Follower(), method: http.MethodPost, path: adminapi.PathReencrypt})
	var res adminapi.ReencryptResult
	if code != http.StatusOK || json.Unmarshal(b, &res) != nil || res.Error != "" {
		t.Fatalf("reencrypt: %d %s", code, b)
	}
	all, err := c.Clientset(l).CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// every Secret but the one replaced (the cluster's own among them)
	if res.Rewritten["secrets"] != len(all.Items)-1 || len(res.Snapshots) != 4 {
		t.Fatalf("reencrypt rewrote %v, snapshots %v; want %d secrets, 4 members", res.Rewritten, res.Snapshots, len(all.Items)-1)
	}
	code, b = admin(t, c, adminCall{member: l, method: http.MethodPost, path: adminapi.PathReencrypt})
	var second adminapi.ReencryptResult
	if json.Unmarshal(b, &second) != nil || code != http.StatusOK || len(second.Rewritten) != 0 {
		t.Fatalf("second reencrypt: %d %s", code, b)
	}

	// The old key removed, every member restarts and reads every Secret.
	encryptionConfig(t, conf, "key2")
	for i := range c.N() {
		c.Stop(i)
		c.Restart(i)
		c.WaitMembers(4)
	}
	readsEverySecret(t, c, "top", "replaced", "untouched")
	for i := range c.N() {
		if err := c.Member(i).Store().Snapshot(); err != nil {
			t.Fatalf("snapshot on member %d: %v", i, err)
		}
	}
	checkAtRest("key2")

	// A backup restores on a member given the key, and only there.
	bk := backup(t, c, 0)
	restoreInto := func(name, conf string) (member.Config, error) {
		dir := filepath.Join(t.TempDir(), name)
		if _, err := datadir.Restore(bytes.NewReader(bk), dir, name, "127.0.0.1:0", "", ""); err != nil {
			t.Fatal(err)
		}
		cfg := member.DefaultConfig()
		cfg.ID, cfg.DataDir, cfg.APIAddr, cfg.Store.RaftAddr = name, dir, "127.0.0.1:0", "127.0.0.1:0"
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		cfg.EncryptionProviderConfig = conf
		membertest.FastRaft(&cfg)
		if conf == "" {
			m, err := member.Start(ctx, cfg)
			if err == nil {
				m.Close()
			}
			return cfg, err
		}
		return cfg, nil
	}
	if _, err := restoreInto("r-nokey", ""); err == nil {
		t.Error("a backup with encrypted Secrets restored on a member without the key")
	}
	cfg, _ := restoreInto("r-key", conf)
	r := membertest.Open(t, cfg)
	readsEverySecret(t, r, "top", "replaced", "untouched")

	// A member without the key refuses to start, and says why.
	c.Stop(3)
	var logs syncBuffer
	bad := c.Config(3)
	bad.EncryptionProviderConfig = ""
	bad.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if m, err := member.Start(ctx, bad); err == nil {
		m.Close()
		t.Fatal("a member without the encryption key started")
	}
	if !strings.Contains(logs.String(), "stored encrypted but this member has no encryption configuration") {
		t.Fatalf("the refusal does not say why:\n%s", logs.String())
	}
}

func hasSuffixIn(files []string, suffix string) bool {
	for _, f := range files {
		if strings.HasSuffix(f, suffix) {
			return true
		}
	}
	return false
}

// syncBuffer is a bytes.Buffer for a logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
