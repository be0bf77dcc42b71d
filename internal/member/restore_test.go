package member_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// A backup of a running cluster restored into an empty data dir starts a
// new single-member cluster with every object of the backup at its
// resourceVersion, new secrets, and writes after the backup's index.
func TestRestoreDataDir(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	ctx := t.Context()
	cms := c.PlainClientset(0).CoreV1().ConfigMaps("default")
	for i := range 20 {
		if _, err := cms.Create(ctx, configMap(fmt.Sprintf("before-%d", i), map[string]string{"i": strconv.Itoa(i)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	info, err := c.Member(c.Follower()).Store().Backup(ctx, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, configMap("after", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want, err := snapshotOf(ctx, c, 0)
	if err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(t.TempDir(), "restored")
	if _, err := datadir.Restore(bytes.NewReader(buf.Bytes()), dir, "r0", "127.0.0.1:0", "", "restored-join"); err != nil {
		t.Fatal(err)
	}
	if _, err := datadir.Restore(bytes.NewReader(buf.Bytes()), dir, "r0", "127.0.0.1:0", "", ""); err == nil {
		t.Error("restored twice into the same data dir")
	}
	cfg := member.DefaultConfig()
	cfg.ID, cfg.DataDir, cfg.APIAddr, cfg.Store.RaftAddr = "r0", dir, "127.0.0.1:0", "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	membertest.FastRaft(&cfg)
	r := membertest.Open(t, cfg)
	got, err := snapshotOf(ctx, r, 0)
	if err != nil {
		t.Fatal(err)
	}
	// exactly the ConfigMaps of the backup: the original's without "after"
	var expect []string
	for _, s := range want {
		if rv := rvOf(s); rv <= info.Index {
			expect = append(expect, s)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(expect) || len(expect) < 20 {
		t.Fatalf("restored cluster has\n%v\nwant\n%v", got, expect)
	}
	cm, err := r.PlainClientset(0).CoreV1().ConfigMaps("default").Create(ctx, configMap("new", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rv, _ := strconv.ParseUint(cm.ResourceVersion, 10, 64); rv <= info.Index {
		t.Errorf("a write after the restore got resourceVersion %d, not above the backup's %d", rv, info.Index)
	}
	sec, _, err := datadir.LoadSecrets(dir)
	if err != nil || sec.JoinToken != "restored-join" {
		t.Errorf("restored secrets: %v %q", err, sec.JoinToken)
	}
	old, _, _ := datadir.LoadSecrets(c.Config(0).DataDir)
	if sec.ClusterID() == old.ClusterID() {
		t.Error("the restored cluster has the old cluster's CA")
	}
}

// rvOf returns the resourceVersion of a snapshotOf line.
func rvOf(line string) uint64 {
	_, rest, _ := strings.Cut(line, "@")
	rv, _, _ := strings.Cut(rest, "=")
	n, _ := strconv.ParseUint(rv, 10, 64)
	return n
}
