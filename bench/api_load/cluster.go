package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/litek8s/litek8s/internal/member"
)

// cluster is n real members in this process: real TCP Raft on 127.0.0.1,
// raft.db under a data dir each, the real HTTPS API. It is not
// membertest.Cluster because that one is bound to a testing.TB.
type cluster struct {
	members []*member.Member
	eps     []*endpoint // one per member, the load clients' transports
	token   string
	ca      *x509.CertPool
	caPEM   []byte
}

// startCluster starts n members with their data dirs under dir: the first
// bootstraps, the others join it. It returns once every member is in the
// Raft configuration and answers with the default namespace. On error it
// closes what it started.
//
// raftScale multiplies the members' Raft heartbeat, election and leader
// lease timeouts (-raft-timeout-scale); simNodes is the simulated nodes the
// leader runs (-simulated-nodes).
func startCluster(ctx context.Context, dir string, n, conns int, timeout time.Duration, raftScale, simNodes int, log *slog.Logger) (_ *cluster, err error) {
	c := &cluster{}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	for i := range n {
		cfg := member.DefaultConfig()
		cfg.ID = fmt.Sprintf("m%d", i)
		cfg.DataDir = filepath.Join(dir, cfg.ID)
		cfg.APIAddr = "127.0.0.1:0"
		cfg.Store.RaftAddr = "127.0.0.1:0"
		cfg.Logger = log
		st := &cfg.Store
		st.HeartbeatTimeout *= time.Duration(raftScale)
		st.ElectionTimeout *= time.Duration(raftScale)
		st.LeaderLeaseTimeout *= time.Duration(raftScale)
		cfg.Controllers.Scheduling.SimNodes.Count = simNodes
		cfg.JoinToken = "api-load-join-token" // member 0 makes it the cluster's
		cfg.AdminToken = adminToken           // the load's credentials (members keep its hash)
		if i > 0 {
			cfg.Join = c.members[0].URL()
		}
		m, err := member.Start(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("start member %s: %w", cfg.ID, err)
		}
		c.members = append(c.members, m)
		if i == 0 {
			if err := c.loadCredentials(m.Kubeconfig()); err != nil {
				return nil, err
			}
		}
		c.eps = append(c.eps, newEndpoint(cfg.ID, m.URL(), c.token, c.ca, conns, timeout))
	}
	err = poll(ctx, 30*time.Second, func() error {
		l, ok := c.leader()
		if !ok {
			return errors.New("no leader")
		}
		ms, err := c.members[l].Store().Members()
		if err != nil {
			return err
		}
		if len(ms) != n {
			return fmt.Errorf("%d members in the Raft configuration, want %d", len(ms), n)
		}
		for _, ep := range c.eps {
			if err := ep.do(ctx, call{method: http.MethodGet, path: "/api/v1/namespaces/default"}, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cluster of %d not ready: %w", n, err)
	}
	return c, nil
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

// leader returns the index of the member that leads now.
func (c *cluster) leader() (int, bool) {
	for i, m := range c.members {
		if m.Store().IsLeader() {
			return i, true
		}
	}
	return 0, false
}

// leaderEP returns the leader's endpoint, waiting for one.
func (c *cluster) leaderEP(ctx context.Context) (*endpoint, error) {
	var i int
	err := poll(ctx, 10*time.Second, func() error {
		var ok bool
		if i, ok = c.leader(); !ok {
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
	for i := len(c.members) - 1; i >= 0; i-- {
		if err := c.members[i].Close(); err != nil {
			errs = append(errs, fmt.Errorf("close member %d: %w", i, err))
		}
	}
	c.members = nil
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
