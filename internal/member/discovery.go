package member

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/litek8s/litek8s/internal/httpx"
	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// Before its store opens, a member started with peers asks them who they
// are (raftstore.Hello, unauthenticated: an ID and a cluster ID, nothing
// secret), and answers them the same on its API listener, so that:
//
//   - fresh members started with BootstrapExpect N form one cluster: once N
//     fresh members are known, the one with the lowest ID bootstraps and
//     every other joins it (or any member already in a cluster);
//   - a member whose data belongs to another cluster than its peers'
//     refuses to start.

// helloInterval is how often a waiting member asks its peers again.
const helloInterval = 300 * time.Millisecond

// discover waits until this fresh member knows whom to join: "" when it
// bootstraps the cluster itself.
func (m *Member) discover(ctx context.Context) (string, error) {
	stop, err := m.serveHello("")
	if err != nil {
		return "", err
	}
	defer stop()
	c := helloClient(m.dial)
	defer c.CloseIdleConnections()
	t := time.NewTicker(helloInterval)
	defer t.Stop()
	for logged := 0; ; {
		fresh := map[string]string{m.cfg.ID: m.url}
		for _, peer := range m.cfg.Peers {
			h, err := raftstore.FetchHello(ctx, c, peer)
			switch {
			case err != nil || h.ID == m.cfg.ID:
			case h.ClusterID != "":
				m.log.Info("joining the cluster of a peer", "peer", peer, "peerID", h.ID, "cluster", h.ClusterID)
				return peer, nil
			default:
				fresh[h.ID] = peer
			}
		}
		if len(fresh) >= m.cfg.BootstrapExpect {
			ids := make([]string, 0, len(fresh))
			for id := range fresh {
				ids = append(ids, id)
			}
			if slices.Min(ids) == m.cfg.ID {
				m.log.Info("bootstrapping the cluster", "members", len(fresh))
				return "", nil
			}
		}
		if len(fresh) > logged { // say who is still missing, once per new member found
			logged = len(fresh)
			m.log.Info("waiting for peers to bootstrap", "found", len(fresh), "expect", m.cfg.BootstrapExpect)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("member: waiting for %d members to bootstrap: %w", m.cfg.BootstrapExpect, ctx.Err())
		case <-t.C:
		}
	}
}

// checkCluster refuses to start a member whose data belongs to another
// cluster than the one its join address or peers are in. Peers that cannot
// be reached are skipped: a restarted member must start when they are down.
func (m *Member) checkCluster(ctx context.Context, own string) error {
	targets := m.cfg.Peers
	if m.cfg.Join != "" {
		targets = append([]string{m.cfg.Join}, targets...)
	}
	if len(targets) == 0 {
		return nil
	}
	stop, err := m.serveHello(own)
	if err != nil {
		return err
	}
	defer stop()
	c := helloClient(m.dial)
	defer c.CloseIdleConnections()
	for _, peer := range targets {
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		h, err := raftstore.FetchHello(hctx, c, peer)
		cancel()
		if err == nil && h.ID != m.cfg.ID && h.ClusterID != "" && h.ClusterID != own {
			return fmt.Errorf("member: the data dir %s belongs to cluster %s, but %s (member %s) is in cluster %s: "+
				"start this member with an empty data dir to join that cluster", m.cfg.DataDir, own, peer, h.ID, h.ClusterID)
		}
	}
	return nil
}

// helloClient asks peers who they are. It does not verify their
// certificates: a fresh member does not know the cluster CA yet, and hello
// carries nothing secret either way.
func helloClient(dial dialFunc) *http.Client {
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: dial,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
}

// serveHello answers hello on the API listener, with a throwaway
// certificate, until stop; the listener stays open for the API.
func (m *Member) serveHello(clusterID string) (stop func(), err error) {
	tcp, ok := m.ln.(*net.TCPListener)
	if !ok {
		return nil, errors.New("member: the API listener is not TCP")
	}
	cert, err := throwawayCert()
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	hello := raftstore.Hello{ID: m.cfg.ID, ClusterID: clusterID}
	mux.HandleFunc("GET /internal/v1/hello", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusOK, hello)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "this member is starting", http.StatusServiceUnavailable)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(tls.NewListener(pausedOnClose{tcp}, &tls.Config{Certificates: []tls.Certificate{cert}}))
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		<-done
		tcp.SetDeadline(time.Time{}) // accept again, for the API
	}, nil
}

// pausedOnClose makes Close stop Accept (with a deadline) without closing
// the listener, which the API serves on next.
type pausedOnClose struct{ *net.TCPListener }

func (l pausedOnClose) Close() error { return l.SetDeadline(time.Now()) }

// throwawayCert is a self-signed certificate for serveHello.
func throwawayCert() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: datadir.Serial(), Subject: pkix.Name{CommonName: "litek8s-starting"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
