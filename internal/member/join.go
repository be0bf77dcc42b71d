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
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/litek8s/litek8s/internal/member/certs"
	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// dialFunc opens a connection to another member (Config.Dial).
type dialFunc = func(ctx context.Context, network, address string) (net.Conn, error)

// joinSeedTimeout bounds a first join's wait for its seed: past it the
// member gives up, naming the address it tried.
const joinSeedTimeout = time.Minute

// fetchSecrets gets the cluster's shared secrets from the member at seed;
// the join token authenticates the joiner. With caHash ("sha256:<hex>" of
// the cluster CA's certificate, as the members log it), the joiner first
// takes the CA from the seed's hello, checks its hash, and then verifies
// the seed with it before it sends the token. Without, it trusts the seed
// it was told to join on first use (the token still goes over TLS). An
// unreachable seed is retried, each attempt logged, for joinSeedTimeout
// (or until ctx ends).
func fetchSecrets(ctx context.Context, log *slog.Logger, dial dialFunc, seed, token, caHash string) (datadir.Secrets, error) {
	ctx, cancel := context.WithTimeout(ctx, joinSeedTimeout)
	defer cancel()
	tc := &tls.Config{InsecureSkipVerify: true}
	if caHash != "" {
		pool, err := pinnedCA(ctx, log, dial, seed, caHash)
		if err != nil {
			return datadir.Secrets{}, err
		}
		tc = &tls.Config{ServerName: certs.MemberServerName, InsecureSkipVerify: true, // verified in VerifyConnection
			VerifyConnection: verifyPeerServer(pool)}
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: dial, TLSClientConfig: tc}}
	defer c.CloseIdleConnections()
	var s datadir.Secrets
	err := retrySeed(ctx, log, "fetch the join secrets", seed, func() error {
		raw, err := raftstore.FetchSecrets(ctx, c, seed, token)
		if err == nil {
			if s, err = datadir.Unmarshal(raw); err != nil {
				return permanent{fmt.Errorf("member: join secrets from %s: %w", seed, err)}
			}
			return nil
		}
		if errors.Is(err, raftstore.ErrRefused) {
			return permanent{fmt.Errorf("member: join %s: %w", seed, err)}
		}
		return err
	})
	return s, err
}

// pinnedCA fetches the cluster CA from the seed's hello and returns it
// once its hash is caHash.
func pinnedCA(ctx context.Context, log *slog.Logger, dial dialFunc, seed, caHash string) (*x509.CertPool, error) {
	c := helloClient(dial)
	defer c.CloseIdleConnections()
	var pool *x509.CertPool
	err := retrySeed(ctx, log, "fetch the cluster CA", seed, func() error {
		h, err := raftstore.FetchHello(ctx, c, seed)
		if err != nil {
			return err
		}
		got := caHashOf([]byte(h.CA))
		if h.CA == "" || got != caHash {
			return permanent{fmt.Errorf("member: %s presents cluster CA %s, not the %s given: not joining it", seed, got, caHash)}
		}
		pool = x509.NewCertPool()
		pool.AppendCertsFromPEM([]byte(h.CA))
		return nil
	})
	return pool, err
}

// permanent is an error retrySeed does not retry.
type permanent struct{ error }

// retrySeed calls call until it returns nil or a permanent error, or ctx
// ends. It logs every failed attempt (what, the seed's address, the
// attempt's number and error) and waits between attempts from 250ms,
// doubling up to 5s; when ctx ends it gives up with an error naming the
// address, the attempts and the last error.
func retrySeed(ctx context.Context, log *slog.Logger, what, seed string, call func() error) error {
	start, wait := time.Now(), 250*time.Millisecond
	for attempt := 1; ; attempt++ {
		err := call()
		var p permanent
		switch {
		case err == nil:
			return nil
		case errors.As(err, &p):
			return p.error
		}
		log.Warn("join: "+what+" from the seed: failed, retrying", "seed", seed, "attempt", attempt, "retry_in", wait.String(), "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("member: join: gave up after %d attempts in %s to %s from %s (is the --join address right and the member up?): %w",
				attempt, time.Since(start).Round(time.Second), what, seed, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
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
