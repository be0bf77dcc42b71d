package raftstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// newTransport returns Raft's network transport: over TLS when the config
// has RaftTLS (what members use), over plain TCP otherwise.
func (s *Store) newTransport(hl hclog.Logger) (*raft.NetworkTransport, error) {
	if s.cfg.RaftTLS == nil {
		var adv net.Addr
		if s.cfg.RaftAdvertise != "" {
			var err error
			if adv, err = net.ResolveTCPAddr("tcp", s.cfg.RaftAdvertise); err != nil {
				return nil, fmt.Errorf("advertise address: %w", err)
			}
		}
		return raft.NewTCPTransportWithLogger(s.cfg.RaftAddr, adv, 3, 10*time.Second, hl)
	}
	// Over TLS the advertised address stays as given: a DNS name (a
	// StatefulSet's stable name) is resolved when a peer dials, so the
	// Raft configuration outlives pod IPs.
	var adv net.Addr
	if s.cfg.RaftAdvertise != "" {
		host, _, err := net.SplitHostPort(s.cfg.RaftAdvertise)
		if err != nil || host == "" {
			return nil, fmt.Errorf("advertise address %q: want host:port", s.cfg.RaftAdvertise)
		}
		adv = advertised(s.cfg.RaftAdvertise)
	}
	ln, err := net.Listen("tcp", s.cfg.RaftAddr)
	if err != nil {
		return nil, err
	}
	if adv == nil {
		adv = ln.Addr()
		if ip := ln.Addr().(*net.TCPAddr).IP; ip == nil || ip.IsUnspecified() {
			ln.Close()
			return nil, errors.New("listening on an unspecified address needs an advertise address")
		}
	}
	stream := &tlsStream{Listener: tls.NewListener(ln, s.cfg.RaftTLS), adv: adv, cfg: s.cfg.RaftTLS, dial: s.cfg.Dial}
	if stream.dial == nil {
		d := &net.Dialer{}
		if ip := s.cfg.SourceIP; ip != nil {
			d.LocalAddr = &net.TCPAddr{IP: ip}
		}
		stream.dial = d.DialContext
	}
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: stream, MaxPool: 3,
		Timeout: 10 * time.Second, Logger: hl}), nil
}

// advertised is an address as given (host:port, the host possibly a DNS
// name).
type advertised string

func (a advertised) Network() string { return "tcp" }
func (a advertised) String() string  { return string(a) }

// tlsStream is Raft's stream layer over TLS: it accepts and dials TLS
// connections with one config, which authenticates the other member in
// both directions.
type tlsStream struct {
	net.Listener
	adv  net.Addr
	cfg  *tls.Config
	dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Addr is the address peers dial.
func (t *tlsStream) Addr() net.Addr { return t.adv }

// Dial opens a TLS connection to the member at address and completes the
// handshake within timeout.
func (t *tlsStream) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	raw, err := t.dial(ctx, "tcp", string(address))
	if err != nil {
		return nil, err
	}
	conn := tls.Client(raw, t.cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return conn, nil
}

// transport is Raft's transport without pipelined replication, and with
// the commit notices' view of replication.
//
// Without pipelining Raft sends a follower one AppendEntries at a time
// (each carrying up to MaxAppendEntries entries). hashicorp/raft v1.7.3's
// pipeline can deadlock a leader's replication goroutine for good, and
// with it the member's shutdown: once the pipeline's decoder stops (a
// response with a newer term, after a leadership transfer or an election,
// or a failed append), nothing drains its responses, so the next pipelined
// send blocks on a channel nobody reads, and pipelineReplicate never gets
// to close the pipeline. With two RPCs in flight (its default) the
// pipeline gains little over batching anyway (hashicorp/raft#541).
type transport struct {
	*raft.NetworkTransport
	notices *commitNotices
}

// AppendEntriesPipeline makes Raft fall back to one RPC at a time.
func (transport) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}

// AppendEntries sends one AppendEntries and shows the answer to the commit
// notices.
func (t transport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest,
	resp *raft.AppendEntriesResponse) error {
	err := t.NetworkTransport.AppendEntries(id, target, args, resp)
	if err == nil {
		t.notices.observe(id, target, args, resp)
	}
	return err
}
