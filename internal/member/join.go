package member

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/litek8s/litek8s/internal/member/certs"
	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// dialFunc opens a connection to another member (Config.Dial).
type dialFunc = func(ctx context.Context, network, address string) (net.Conn, error)

// fetchSecrets gets the cluster's shared secrets from the member at seed;
// the join token authenticates the joiner. With caHash ("sha256:<hex>" of
// the cluster CA's certificate, as the members log it), the joiner first
// takes the CA from the seed's hello, checks its hash, and then verifies
// the seed with it before it sends the token. Without, it trusts the seed
// it was told to join on first use (the token still goes over TLS).
func fetchSecrets(ctx context.Context, dial dialFunc, seed, token, caHash string) (datadir.Secrets, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tc := &tls.Config{InsecureSkipVerify: true}
	if caHash != "" {
		pool, err := pinnedCA(ctx, dial, seed, caHash)
		if err != nil {
			return datadir.Secrets{}, err
		}
		tc = &tls.Config{ServerName: certs.MemberServerName, InsecureSkipVerify: true, // verified in VerifyConnection
			VerifyConnection: verifyPeerServer(pool)}
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: dial, TLSClientConfig: tc}}
	defer c.CloseIdleConnections()
	var s datadir.Secrets
	for {
		raw, err := raftstore.FetchSecrets(ctx, c, seed, token)
		if err == nil {
			if s, err = datadir.Unmarshal(raw); err != nil {
				return s, fmt.Errorf("member: join secrets from %s: %w", seed, err)
			}
			return s, nil
		}
		if errors.Is(err, raftstore.ErrRefused) {
			return s, fmt.Errorf("member: join %s: %w", seed, err)
		}
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("member: fetch join secrets from %s: %w", seed, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// pinnedCA fetches the cluster CA from the seed's hello and returns it
// once its hash is caHash.
func pinnedCA(ctx context.Context, dial dialFunc, seed, caHash string) (*x509.CertPool, error) {
	c := helloClient(dial)
	defer c.CloseIdleConnections()
	for {
		h, err := raftstore.FetchHello(ctx, c, seed)
		if err == nil {
			got := caHashOf([]byte(h.CA))
			if h.CA == "" || got != caHash {
				return nil, fmt.Errorf("member: %s presents cluster CA %s, not the %s given: not joining it", seed, got, caHash)
			}
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM([]byte(h.CA))
			return pool, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("member: fetch the cluster CA from %s: %w", seed, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// caHashOf is "sha256:<hex>" of the first certificate in pemBytes ("" when
// there is none).
func caHashOf(pemBytes []byte) string {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return ""
	}
	sum := sha256.Sum256(block.Bytes)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func certIPs(adv string, hostnames []string) []net.IP {
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	if host, _, err := net.SplitHostPort(adv); err == nil {
		if ip := net.ParseIP(host); ip != nil {
			ips = append(ips, ip)
		}
	}
	for _, h := range hostnames {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		}
	}
	return ips
}

// certNames are the serving certificate's DNS names: localhost, the
// host of each advertised address that is a name (a StatefulSet's stable
// name), and the extra hostnames.
func certNames(hostnames []string, advertised ...string) []string {
	names := []string{"localhost"}
	for _, a := range advertised {
		if host, _, err := net.SplitHostPort(a); err == nil && host != "" && net.ParseIP(host) == nil {
			names = append(names, host)
		}
	}
	for _, h := range hostnames {
		if net.ParseIP(h) == nil {
			names = append(names, h)
		}
	}
	return names
}
