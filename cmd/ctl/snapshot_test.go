package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// rootCAName is the ConfigMap the root CA publisher keeps in every
// namespace: a restored cluster has a new CA, so its copy differs.
const rootCAName = "kube-root-ca.crt"

// configMaps lists every ConfigMap but the root CA's as
// namespace/name@resourceVersion uid.
func configMaps(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	l, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, cm := range l.Items {
		if cm.Name != rootCAName {
			out = append(out, fmt.Sprintf("%s/%s@%s %s", cm.Namespace, cm.Name, cm.ResourceVersion, cm.UID))
		}
	}
	sort.Strings(out)
	return out, nil
}

func rvOf(line string) uint64 {
	_, rest, _ := strings.Cut(line, "@")
	rv, _, _ := strings.Cut(rest, " ")
	n, _ := strconv.ParseUint(rv, 10, 64)
	return n
}

// `ctl snapshot save` during writes through every member, then `ctl
// snapshot restore` into a fresh data dir: a member started on it serves
// exactly the objects with resourceVersion <= the snapshot's index.
func TestCtlSnapshotSaveRestore(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	ctx := t.Context()
	kc := c.Kubeconfig(0)
	dir := t.TempDir()
	file := filepath.Join(dir, "backup.litek8s")

	// writes through every member until the snapshot is taken
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]uint64{} // name → resourceVersion
	for i := range c.N() {
		cs := c.Clientset(i)
		wg.Go(func() {
			for n := 0; wctx.Err() == nil; n++ {
				name := fmt.Sprintf("w%d-%d", i, n)
				cm, err := cs.CoreV1().ConfigMaps("default").Create(wctx,
					&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
				if err != nil {
					continue // cancelled, or unknown outcome: not acknowledged
				}
				rv, _ := strconv.ParseUint(cm.ResourceVersion, 10, 64)
				mu.Lock()
				acked["default/"+name] = rv
				mu.Unlock()
			}
		})
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(acked) < 30 {
			return fmt.Errorf("%d writes so far", len(acked))
		}
		return nil
	})
	var saved SnapshotOutput
	ctlJSON(t, &saved, "snapshot", "save", file, "--kubeconfig", kc, "--server", c.URL(c.Follower()))
	time.Sleep(100 * time.Millisecond) // writes after the snapshot too
	stop()
	wg.Wait()
	if _, err := os.Stat(file + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("%s.tmp left behind: %v", file, err)
	}
	if saved.Index == 0 || len(saved.SHA256) != 64 || saved.Objects == 0 || saved.File != file {
		t.Fatalf("saved: %+v", saved)
	}
	var inspected SnapshotOutput
	ctlJSON(t, &inspected, "snapshot", "inspect", file)
	if inspected.Index != saved.Index || inspected.SHA256 != saved.SHA256 || inspected.Objects != saved.Objects {
		t.Fatalf("inspect %+v, save said %+v", inspected, saved)
	}
	out, _, err := ctl(ctx, "snapshot", "inspect", file)
	if err != nil || !strings.Contains(out, fmt.Sprintf("index %d", saved.Index)) || !strings.Contains(out, saved.SHA256) {
		t.Fatalf("inspect table: %v\n%s", err, out)
	}

	// what the original cluster holds once the writes stopped
	var all []string
	membertest.Eventually(t, 10*time.Second, func() error {
		all, err = configMaps(ctx, c.Clientset(0))
		return err
	})
	var want []string
	for _, s := range all {
		if rvOf(s) <= saved.Index {
			want = append(want, s)
		}
	}
	mu.Lock()
	for name, rv := range acked {
		if rv <= saved.Index && !strings.Contains(strings.Join(want, "\n"), name+"@"+strconv.FormatUint(rv, 10)+" ") {
			t.Errorf("acknowledged write %s@%d is not among the objects at or before %d", name, rv, saved.Index)
		}
	}
	mu.Unlock()
	if len(want) == len(all) {
		t.Logf("no write after the snapshot's index %d", saved.Index)
	}

	dataDir := filepath.Join(t.TempDir(), "r0")
	var restored SnapshotOutput
	ctlJSON(t, &restored, "snapshot", "restore", file, "--data-dir", dataDir, "--id", "r0", "--raft-addr", "127.0.0.1:0")
	if restored.Index != saved.Index || restored.DataDir != dataDir {
		t.Fatalf("restored %+v", restored)
	}
	if _, _, err := ctl(ctx, "snapshot", "restore", file, "--data-dir", dataDir, "--id", "r0"); err == nil {
		t.Error("restored twice into one data dir")
	}
	cfg := member.DefaultConfig()
	cfg.ID, cfg.DataDir, cfg.APIAddr, cfg.Store.RaftAddr = "r0", dataDir, "127.0.0.1:0", "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	m, err := member.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	rc, err := clientcmd.BuildConfigFromFlags("", m.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	membertest.Eventually(t, 20*time.Second, func() error {
		got, err = configMaps(ctx, cs)
		return err
	})
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("restored member serves\n%s\nwant (resourceVersion <= %d)\n%s", strings.Join(got, "\n"),
			saved.Index, strings.Join(want, "\n"))
	}
	var st StatusOutput
	ctlJSON(t, &st, "status", "--kubeconfig", m.Kubeconfig())
	if len(st.Members) != 1 || st.Members[0].ID != "r0" || st.Members[0].Status == nil ||
		st.Members[0].Status.Role != "Leader" {
		t.Fatalf("status of the restored member: %+v", st)
	}
}

// A damaged backup is refused by inspect and restore; a refused save
// leaves no file.
func TestCtlSnapshotRefusals(t *testing.T) {
	c := membertest.StartCluster(t, 1)
	ctx := t.Context()
	dir := t.TempDir()
	file := filepath.Join(dir, "b")
	if _, stderr, err := ctl(ctx, "snapshot", "save", file, "--kubeconfig", c.Kubeconfig(0), "--token", "wrong"); err == nil ||
		!strings.Contains(stderr, "admin token was refused") {
		t.Fatalf("save with a wrong token: %v %s", err, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a refused save left %v", ents)
	}
	var saved SnapshotOutput
	ctlJSON(t, &saved, "snapshot", "save", file, "--kubeconfig", c.Kubeconfig(0))
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := ctl(ctx, "snapshot", "inspect", bad); err == nil || !strings.Contains(stderr, "invalid backup") {
		t.Fatalf("inspect a damaged backup: %v %s", err, stderr)
	}
	target := filepath.Join(dir, "data")
	if _, stderr, err := ctl(ctx, "snapshot", "restore", bad, "--data-dir", target, "--id", "r0"); err == nil ||
		!strings.Contains(stderr, "invalid backup") {
		t.Fatalf("restore a damaged backup: %v %s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(target, "wal")); !os.IsNotExist(err) {
		t.Fatalf("a refused restore wrote a Raft log: %v", err)
	}
}
