package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/litek8s/litek8s/internal/member"
)

// cluster is n real members: real TCP Raft on 127.0.0.1, the Raft log under a
// data dir each, the real HTTPS API. Its members run in this process
// (inProcess) or as `node` processes (-processes, nodeProcs); the bench
// reaches both through the members' API (eps) and the memberSet. It is
// not membertest.Cluster because that one is bound to a testing.TB.
type cluster struct {
	members memberSet
	eps     []*endpoint // one per member, the load clients' transports
	token   string
	ca      *x509.CertPool
	caPEM   []byte
}

// memberSet is what the bench needs of the members beyond their API:
// who leads, how many are in the Raft configuration, the controllers'
// resyncs, and stopping them. Indexes are those of cluster.eps.
type memberSet interface {
	// leader returns the index of the member that leads now.
	leader(ctx context.Context) (int, bool)
	// raftMembers is the member count in the leader l's Raft configuration.
	raftMembers(ctx context.Context, l int) (int, error)
	// resyncs is the controllers' informer relists, all members.
	resyncs(ctx context.Context) (uint64, error)
	// close stops every member and removes nothing (data dirs are under
	// the run's temp dir).
	close() error
}

// clusterConfig is how startCluster starts a cluster.
type clusterConfig struct {
	dir     string // members' data dirs are dir/m0, dir/m1, …
	n       int    // members
	conns   int    // keep-alive connections per endpoint (-clients)
	timeout time.Duration
	// raftScale multiplies the members' Raft heartbeat, election and
	// leader lease timeouts (-raft-timeout-scale; in-process only).
	raftScale int
	simNodes  int // simulated nodes the leader runs (-simulated-nodes)
	log       *slog.Logger
	// nodeBin is the `node` binary: set, the members are processes of it
	// (-processes) that log at logLevel to stderr.
	nodeBin, logLevel string
	stderr            io.Writer
}

// joinToken is the join token of the clusters startCluster starts.
const joinToken = "api-load-join-token"

// startCluster starts cfg.n members with their data dirs under cfg.dir:
// the first bootstraps, the others join it. It returns once every member
// is in the Raft configuration and answers with the default namespace. On
// error it closes what it started.
func startCluster(ctx context.Context, cfg clusterConfig) (_ *cluster, err error) {
	c := &cluster{}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	if cfg.nodeBin != "" {
		err = c.startProcesses(ctx, cfg)
	} else {
		err = c.startInProcess(ctx, cfg)
	}
	if err != nil {
		return nil, err
	}
	err = poll(ctx, 60*time.Second, func() error {
		l, ok := c.members.leader(ctx)
		if !ok {
			return errors.New("no leader")
		}
		n, err := c.members.raftMembers(ctx, l)
		if err != nil {
			return err
		}
		if n != cfg.n {
			return fmt.Errorf("%d members in the Raft configuration, want %d", n, cfg.n)
		}
		for _, ep := range c.eps {
			if err := ep.do(ctx, call{method: http.MethodGet, path: "/api/v1/namespaces/default"}, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cluster of %d not ready: %w", cfg.n, err)
	}
	return c, nil
}

// inProcess is members started with member.Start in this process.
type inProcess []*member.Member

func (c *cluster) startInProcess(ctx context.Context, cc clusterConfig) error {
	var ms inProcess
	c.members = &ms
	for i := range cc.n {
		cfg := member.DefaultConfig()
		cfg.ID = fmt.Sprintf("m%d", i)
		cfg.DataDir = filepath.Join(cc.dir, cfg.ID)
		cfg.APIAddr = "127.0.0.1:0"
		cfg.Store.RaftAddr = "127.0.0.1:0"
		cfg.Logger = cc.log
		st := &cfg.Store
		st.HeartbeatTimeout *= time.Duration(cc.raftScale)
		st.ElectionTimeout *= time.Duration(cc.raftScale)
		st.LeaderLeaseTimeout *= time.Duration(cc.raftScale)
		cfg.Controllers.Scheduling.SimNodes.Count = cc.simNodes
		cfg.JoinToken = joinToken   // member 0 makes it the cluster's
		cfg.AdminToken = adminToken // the load's credentials (members keep its hash)
		if i > 0 {
			cfg.Join = ms[0].URL()
		}
		m, err := member.Start(ctx, cfg)
		if err != nil {
			return fmt.Errorf("start member %s: %w", cfg.ID, err)
		}
		ms = append(ms, m)
		if i == 0 {
			if err := c.loadCredentials(m.Kubeconfig()); err != nil {
				return err
			}
		}
		c.eps = append(c.eps, newEndpoint(cfg.ID, m.URL(), c.token, c.ca, cc.conns, cc.timeout))
	}
	return nil
}

func (ms *inProcess) leader(context.Context) (int, bool) {
	for i, m := range *ms {
		if m.Store().IsLeader() {
			return i, true
		}
	}
	return 0, false
}

func (ms *inProcess) raftMembers(_ context.Context, l int) (int, error) {
	rm, err := (*ms)[l].Store().Members()
	return len(rm), err
}

func (ms *inProcess) resyncs(context.Context) (uint64, error) {
	var n uint64
	for _, m := range *ms {
		n += m.Controllers().Stats().Resyncs
	}
	return n, nil
}

func (ms *inProcess) close() error {
	var errs []error
	for i := len(*ms) - 1; i >= 0; i-- {
		if err := (*ms)[i].Close(); err != nil {
			errs = append(errs, fmt.Errorf("close member %d: %w", i, err))
		}
	}
	*ms = nil
	return errors.Join(errs...)
}

// adminToken is the admin token of the clusters startCluster starts: the
// load clients' bearer token.
const adminToken = "api-load-admin-token-0123456789abcdef"

// loadCredentials reads the cluster CA from a member's admin kubeconfig
// (every member shares it); the load authenticates with adminToken.
func (c *cluster) loadCredentials(kubeconfig string) error {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(rc.CAData) {
		return fmt.Errorf("kubeconfig %s: no CA certificate", kubeconfig)
	}
	c.ca, c.caPEM, c.token = pool, rc.CAData, adminToken
	return nil
}

// leaderEP returns the leader's endpoint, waiting for one.
func (c *cluster) leaderEP(ctx context.Context) (*endpoint, error) {
	var i int
	err := poll(ctx, 10*time.Second, func() error {
		var ok bool
		if i, ok = c.members.leader(ctx); !ok {
			return errors.New("no leader")
		}
		return nil
	})
	return c.eps[i], err
}

// followerEP returns a member that does not lead; ok is false on a
// single-member cluster.
func (c *cluster) followerEP(ctx context.Context) (*endpoint, bool, error) {
	l, err := c.leaderEP(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, ep := range c.eps {
		if ep != l {
			return ep, true, nil
		}
	}
	return nil, false, nil
}

// Close closes every member (their API servers end open watches first)
// and the client connections.
func (c *cluster) Close() error {
	var errs []error
	for _, ep := range c.eps {
		ep.tr.CloseIdleConnections()
	}
	if c.members != nil {
		errs = append(errs, c.members.close())
	}
	for _, ep := range c.eps {
		ep.tr.CloseIdleConnections()
	}
	return errors.Join(errs...)
}

// poll calls f until it returns nil, or returns its last error after d.
func poll(ctx context.Context, d time.Duration, f func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
