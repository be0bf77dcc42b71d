package member

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/member/datadir"
)

// testCluster is N real members in process: real TCP Raft on 127.0.0.1,
// real raft.db, real HTTPS API, talked to with client-go.
type testCluster struct {
	t        *testing.T
	base     string
	members  []*Member
	cfgs     []Config
	clients  []*kubernetes.Clientset
	transps  []*http.Transport
	tweakCfg func(*Config)
}

func fastStore(c *Config) {
	c.Store.HeartbeatTimeout = 150 * time.Millisecond
	c.Store.ElectionTimeout = 150 * time.Millisecond
	c.Store.LeaderLeaseTimeout = 100 * time.Millisecond
	c.Store.CommitTimeout = 5 * time.Millisecond
	c.Store.SnapshotInterval = time.Hour // snapshots only when a test asks
}

func newTestCluster(t *testing.T, n int, tweak func(*Config)) *testCluster {
	t.Helper()
	goroutines := runtime.NumGoroutine()
	c := &testCluster{t: t, base: t.TempDir(), tweakCfg: tweak}
	t.Cleanup(func() {
		c.close()
		checkGoroutines(t, goroutines)
	})
	for i := range n {
		cfg := DefaultConfig()
		cfg.ID = fmt.Sprintf("m%d", i)
		cfg.DataDir = filepath.Join(c.base, cfg.ID)
		cfg.APIAddr = "127.0.0.1:0"
		cfg.Store.RaftAddr = "127.0.0.1:0"
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		fastStore(&cfg)
		if tweak != nil {
			tweak(&cfg)
		}
		cfg.JoinToken = testJoinToken // member 0 makes it the cluster's
		if i > 0 {
			cfg.Join = c.members[0].URL()
		}
		c.cfgs = append(c.cfgs, cfg)
		c.members = append(c.members, nil)
		c.clients = append(c.clients, nil)
		c.transps = append(c.transps, nil)
		c.start(i)
	}
	c.waitMembers(n)
	eventually(t, 10*time.Second, func() error {
		_, err := c.clients[0].CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{})
		return err
	})
	return c
}

// testJoinToken is the join token of the test clusters.
const testJoinToken = "test-join-token"

// start starts member i; a restart reuses the addresses of its first start.
func (c *testCluster) start(i int) {
	c.t.Helper()
	m, err := Start(c.t.Context(), c.cfgs[i])
	if err != nil {
		c.t.Fatalf("start %s: %v", c.cfgs[i].ID, err)
	}
	c.members[i] = m
	c.cfgs[i].APIAddr = strings.TrimPrefix(m.URL(), "https://")
	c.cfgs[i].Store.RaftAddr = m.Store().RaftAddr()
	sec, _, err := datadir.LoadSecrets(c.cfgs[i].DataDir)
	if err != nil {
		c.t.Fatal(err)
	}
	pool, err := sec.CAPool()
	if err != nil {
		c.t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: m.URL(), BearerToken: sec.Token, Transport: tr,
		QPS: 1000, Burst: 1000, Timeout: 20 * time.Second})
	if err != nil {
		c.t.Fatal(err)
	}
	c.clients[i], c.transps[i] = cs, tr
}

// stop stops member i (its data dir stays).
func (c *testCluster) stop(i int) {
	c.t.Helper()
	if c.transps[i] != nil {
		c.transps[i].CloseIdleConnections()
	}
	if err := c.members[i].Close(); err != nil {
		c.t.Logf("close %s: %v", c.cfgs[i].ID, err)
	}
	c.members[i] = nil
}

func (c *testCluster) close() {
	for i, m := range c.members {
		if m != nil {
			c.stop(i)
		}
	}
}

// leader waits for a leader among the running members and returns its index.
func (c *testCluster) leader() int {
	c.t.Helper()
	var idx int
	eventually(c.t, 10*time.Second, func() error {
		for i, m := range c.members {
			if m != nil && m.Store().IsLeader() {
				idx = i
				return nil
			}
		}
		return errors.New("no leader")
	})
	return idx
}

func (c *testCluster) follower() int {
	l := c.leader()
	for i, m := range c.members {
		if m != nil && i != l {
			return i
		}
	}
	c.t.Fatal("no follower")
	return -1
}

func (c *testCluster) waitMembers(n int) {
	c.t.Helper()
	eventually(c.t, 10*time.Second, func() error {
		ms, err := c.members[c.leader()].Store().Members()
		if err != nil {
			return err
		}
		if len(ms) != n {
			return fmt.Errorf("%d members", len(ms))
		}
		for _, m := range ms {
			if m.APIURL == "" {
				return fmt.Errorf("member %s has no API URL yet", m.ID)
			}
		}
		return nil
	})
}

// rootCAName is the ConfigMap the root CA publisher puts in every
// namespace.
const rootCAName = "kube-root-ca.crt"

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
}

// snapshotOf lists every ConfigMap of member i as name@resourceVersion=data,
// but the root CA publisher's kube-root-ca.crt, which every namespace gets
// at the controller's pace, as in kube.
func (c *testCluster) snapshotOf(ctx context.Context, i int) ([]string, error) {
	l, err := c.clients[i].CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, cm := range l.Items {
		if cm.Name == rootCAName {
			continue
		}
		out = append(out, fmt.Sprintf("%s/%s@%s=%v uid=%s", cm.Namespace, cm.Name, cm.ResourceVersion, cm.Data, cm.UID))
	}
	sort.Strings(out)
	return out, nil
}

// sameObjects checks that every running member holds the same ConfigMaps
// and namespaces, and returns the ConfigMaps.
func (c *testCluster) sameObjects(ctx context.Context) []string {
	c.t.Helper()
	var ref []string
	eventually(c.t, 10*time.Second, func() error {
		ref = nil
		for i, m := range c.members {
			if m == nil {
				continue
			}
			got, err := c.snapshotOf(ctx, i)
			if err != nil {
				return err
			}
			if ref == nil {
				ref = got
			} else if strings.Join(got, "\n") != strings.Join(ref, "\n") {
				return fmt.Errorf("member %d differs:\n%v\nvs\n%v", i, got, ref)
			}
		}
		return nil
	})
	return ref
}

func eventually(t *testing.T, d time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not true after %v: %v", d, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func checkGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before+2 { // +2: runtime and testing helpers that come and go
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Errorf("goroutines leaked: %d before, %d after\n%s", before, runtime.NumGoroutine(),
				buf[:runtime.Stack(buf, true)])
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
