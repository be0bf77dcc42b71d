package member

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/litek8s/litek8s/internal/raftstore"
)

// fetchSecrets gets the cluster's shared secrets from the member at seed.
// The joiner does not know the cluster CA yet, so this one call does not
// verify the seed's certificate; the join token authenticates the joiner.
// (Pinning the CA in the token comes with membership hardening.)
func fetchSecrets(ctx context.Context, seed, token string) (secrets, error) {
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var s secrets
	for {
		raw, err := raftstore.FetchSecrets(ctx, c, seed, token)
		if err == nil {
			if err := json.Unmarshal(raw, &s); err != nil {
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

func certNames(hostnames []string) []string {
	names := []string{"localhost"}
	for _, h := range hostnames {
		if net.ParseIP(h) == nil {
			names = append(names, h)
		}
	}
	return names
}
