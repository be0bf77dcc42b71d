package membertest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/litek8s/litek8s/internal/member"
)

// Option adjusts every member's configuration before its first start.
type Option func(*member.Config)

// Cluster is N in-process members. Index i names the same member across
// Stop and Restart.
type Cluster struct {
	t       testing.TB
	cfgs    []member.Config
	members []*member.Member // nil while stopped
	// transps are one client transport per member, kept across restarts so
	// that clients built before a restart reach the restarted member.
	transps []*http.Transport
	token   string
	cert    tls.Certificate // an admin client certificate
	ca      *x509.CertPool
	// dir holds the members' data dirs.
	dir string
}

// JoinToken and AdminToken are the join and admin tokens of the clusters
// StartCluster starts (the members keep only their hashes).
const (
	JoinToken  = "membertest-join-token"
	AdminToken = "membertest-admin-token"
)

// StartCluster starts n members (the first bootstraps, the others join it),
// waits until all of them are in the Raft configuration and the API
// answers, and stops everything on t.Cleanup.
func StartCluster(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	goroutines := runtime.NumGoroutine()
	c := &Cluster{t: t}
	// The data dirs first: cleanups run last-registered first, and a
	// member stopping may still write to its dir (a snapshot as it stops).
	base := t.TempDir()
	t.Cleanup(func() {
		c.close()
		CheckGoroutines(t, goroutines)
	})
	c.dir = base
	for i := range n {
		cfg := member.DefaultConfig()
		cfg.ID = fmt.Sprintf("m%d", i)
		cfg.DataDir = filepath.Join(base, cfg.ID)
		cfg.APIAddr = "127.0.0.1:0"
		cfg.Store.RaftAddr = "127.0.0.1:0"
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		// Raft keeps the timings of a real deployment (an election in about
		// a second): these tests run real clients, which do not retry a 503
		// during an election, on small machines under -race, where the
		// 100 ms leader lease of the Raft tests is missed under load.
		cfg.Store.CommitTimeout = 5 * time.Millisecond
		cfg.Store.SnapshotInterval = time.Hour // snapshots only when a test asks
		for _, o := range opts {
			o(&cfg)
		}
		cfg.JoinToken = JoinToken // member 0 makes it the cluster's
		if cfg.AdminToken == "" {
			cfg.AdminToken = AdminToken // only member 0's counts
		}
		if i > 0 {
			cfg.Join = c.members[0].URL()
		}
		c.cfgs = append(c.cfgs, cfg)
		c.members = append(c.members, nil)
		c.transps = append(c.transps, nil)
		c.start(i)
	}
	c.WaitMembers(n)
	Eventually(t, 10*time.Second, func() error {
		_, err := c.Clientset(0).CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{})
		return err
	})
	return c
}

// FastRaft is an Option with the short Raft timings of the Raft tests
// (elections in about 150 ms), for tests that stop and elect leaders.
func FastRaft(c *member.Config) {
	c.Store.HeartbeatTimeout = 150 * time.Millisecond
	c.Store.ElectionTimeout = 150 * time.Millisecond
	c.Store.LeaderLeaseTimeout = 100 * time.Millisecond
	c.Store.CommitTimeout = 5 * time.Millisecond
	c.Store.SnapshotInterval = time.Hour // snapshots only when a test asks
}

// Open starts one member from cfg as it is (a data dir the test prepared,
// e.g. from a backup) as a cluster of its own, without waiting for it to
// lead; it is stopped on t.Cleanup.
func Open(t testing.TB, cfg member.Config) *Cluster {
	t.Helper()
	c := &Cluster{t: t, dir: filepath.Dir(cfg.DataDir)}
	t.Cleanup(c.close)
	c.Add(cfg)
	return c
}

// Configure changes member i's configuration for its next Restart.
func (c *Cluster) Configure(i int, f func(*member.Config)) { f(&c.cfgs[i]) }

// Add starts one more member with cfg (its ID, data dir, addresses and
// Join chosen by the test) and returns its index; it is stopped on
// t.Cleanup like the others.
func (c *Cluster) Add(cfg member.Config) int {
	c.t.Helper()
	c.cfgs = append(c.cfgs, cfg)
	c.members = append(c.members, nil)
	c.transps = append(c.transps, nil)
	c.start(len(c.members) - 1)
	return len(c.members) - 1
}

// start starts member i; a restart reuses the addresses of its first start.
func (c *Cluster) start(i int) {
	c.t.Helper()
	m, err := member.Start(c.t.Context(), c.cfgs[i])
	if err != nil {
		c.t.Fatalf("start %s: %v", c.cfgs[i].ID, err)
	}
	c.members[i] = m
	c.cfgs[i].APIAddr = strings.TrimPrefix(m.URL(), "https://")
	c.cfgs[i].Store.RaftAddr = m.Store().RaftAddr()
	if c.ca == nil {
		if err := c.loadCredentials(m.Kubeconfig()); err != nil {
			c.t.Fatal(err)
		}
	}
	if c.transps[i] == nil {
		tc := &tls.Config{RootCAs: c.ca}
		if c.token == "" { // no admin token: the admin client certificate
			tc.Certificates = []tls.Certificate{c.cert}
		}
		c.transps[i] = &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 16}
	}
}

// loadCredentials reads the cluster CA and an admin client certificate
// from a member's admin kubeconfig (every member shares the CA); the admin
// token is the one the members' configuration gave (AdminToken for
// StartCluster), if any: clients use it, else the certificate.
func (c *Cluster) loadCredentials(kubeconfig string) error {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("membertest: kubeconfig %s: %w", kubeconfig, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(rc.CAData) {
		return fmt.Errorf("membertest: kubeconfig %s has no CA certificate", kubeconfig)
	}
	cert, err := tls.X509KeyPair(rc.CertData, rc.KeyData)
	if err != nil {
		return fmt.Errorf("membertest: kubeconfig %s: client certificate: %w", kubeconfig, err)
	}
	c.ca, c.cert, c.token = pool, cert, ""
	for _, cfg := range c.cfgs {
		if cfg.AdminToken != "" {
			c.token = cfg.AdminToken
			break
		}
	}
	return nil
}

// N is the number of members, running or stopped.
func (c *Cluster) N() int { return len(c.members) }

// Member returns member i, or nil while it is stopped.
func (c *Cluster) Member(i int) *member.Member { return c.members[i] }

// Config returns member i's configuration (with the addresses of its
// first start).
func (c *Cluster) Config(i int) member.Config { return c.cfgs[i] }

// Dir is the directory that holds the members' data dirs.
func (c *Cluster) Dir() string { return c.dir }

// Token is the cluster's admin token ("" when it has none: the transports
// then authenticate with an admin client certificate).
func (c *Cluster) Token() string { return c.token }

// Transport is the client transport of member i (trusts the cluster CA).
func (c *Cluster) Transport(i int) http.RoundTripper { return c.transps[i] }

// URL returns member i's API URL (stable across restarts).
func (c *Cluster) URL(i int) string { return "https://" + c.cfgs[i].APIAddr }

// Kubeconfig returns the path of member i's admin kubeconfig (for CLIs).
func (c *Cluster) Kubeconfig(i int) string { return filepath.Join(c.cfgs[i].DataDir, "kubeconfig") }

// RESTConfig returns a new client configuration for member i that uses the
// member's own transport: clients built from it keep working across a
// Restart(i), and CloseIdleConnections(i) drops their connections. No
// client-side rate limit, no request timeout (watches stay open).
func (c *Cluster) RESTConfig(i int) *rest.Config {
	return &rest.Config{Host: c.URL(i), BearerToken: c.token, Transport: c.transps[i], QPS: -1}
}

// Clientset returns a typed client for member i for the test's own
// requests: it retries requests answered 503 (see RetryUnavailable).
func (c *Cluster) Clientset(i int) *kubernetes.Clientset {
	cfg := c.RESTConfig(i)
	cfg.WrapTransport = RetryUnavailable
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	return cs
}

// PlainClientset returns a typed client for member i as a real client is:
// it does not retry (for tests of what a client sees); 1000 QPS, and a
// 20 s timeout per request.
func (c *Cluster) PlainClientset(i int) *kubernetes.Clientset {
	cfg := c.RESTConfig(i)
	cfg.QPS, cfg.Burst, cfg.Timeout = 1000, 1000, 20*time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	return cs
}

// CloseIdleConnections drops the idle client connections to member i.
func (c *Cluster) CloseIdleConnections(i int) { c.transps[i].CloseIdleConnections() }

// Stop stops member i; its data dir and addresses stay for Restart.
func (c *Cluster) Stop(i int) {
	c.t.Helper()
	if err := c.members[i].Close(); err != nil {
		c.t.Logf("close %s: %v", c.cfgs[i].ID, err)
	}
	c.members[i] = nil
	c.transps[i].CloseIdleConnections()
}

// Restart starts the stopped member i again from its data dir, on the same
// API and Raft addresses.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if c.members[i] != nil {
		c.t.Fatalf("restart %s: still running", c.cfgs[i].ID)
	}
	c.start(i)
}

func (c *Cluster) close() {
	for i, m := range c.members {
		if m != nil {
			c.Stop(i)
		}
	}
	for _, tr := range c.transps {
		if tr != nil {
			tr.CloseIdleConnections()
		}
	}
}

// WaitLeader waits until a running member leads and returns its index.
func (c *Cluster) WaitLeader() int {
	c.t.Helper()
	idx := -1
	Eventually(c.t, 10*time.Second, func() error {
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

// Follower returns the index of a running member that does not lead.
func (c *Cluster) Follower() int {
	c.t.Helper()
	l := c.WaitLeader()
	for i, m := range c.members {
		if m != nil && i != l {
			return i
		}
	}
	c.t.Fatal("membertest: no running follower")
	return -1
}

// WaitMembers waits until the Raft configuration has n members, each with
// its API URL.
func (c *Cluster) WaitMembers(n int) {
	c.t.Helper()
	Eventually(c.t, 10*time.Second, func() error {
		ms, err := c.members[c.WaitLeader()].Store().Members()
		if err != nil {
			return err
		}
		if len(ms) != n {
			return fmt.Errorf("%d members in the Raft configuration, want %d", len(ms), n)
		}
		for _, m := range ms {
			if m.APIURL == "" {
				return fmt.Errorf("member %s has no API URL yet", m.ID)
			}
		}
		return nil
	})
}
