package member_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/certs"
	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// servedCert is the certificate a fresh TLS handshake with addr gets
// (presenting client when given); the connection is closed.
func servedCert(t *testing.T, addr string, client *tls.Certificate) (*x509.Certificate, error) {
	t.Helper()
	tc := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} // the chain is checked by the caller
	if client != nil {
		tc.Certificates = []tls.Certificate{*client}
	}
	conn, err := tls.Dial("tcp", addr, tc)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// Issue 17, acceptance 3: with member certificates issued for 2 minutes, a
// 3-member cluster renews them (at 2/3 of their lifetime) and keeps
// serving past the original expiry without a restart: reads on every
// member over new connections, writes through a follower, Raft
// replication, and a fourth member that joins after the expiry (new Raft
// and API connections in both directions, each end checking the other's
// certificate against the clock). The renewed certificates expire later,
// are kept in tls/member.crt, and the expiry gauge moves.
func TestCertificatesRenewWithoutRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 2.5 minutes")
	}
	const validity = 2 * time.Minute
	short := func(c *member.Config) { c.CertValidity = validity }
	c := membertest.StartCluster(t, 3, short)
	ctx := t.Context()
	sec, _, err := datadir.LoadSecrets(c.Config(0).DataDir)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := sec.CAPool()
	if err != nil {
		t.Fatal(err)
	}
	prober, err := sec.MemberCert("prober", nil, nil) // to handshake with Raft's listeners
	if err != nil {
		t.Fatal(err)
	}
	const gauge = "litek8s_certificate_expiry_timestamp_seconds"
	type state struct {
		api, raft *x509.Certificate
		gauge     float64
		member    *member.Member
	}
	observe := func(i int) (state, error) {
		s := state{member: c.Member(i)}
		var err error
		if s.api, err = servedCert(t, c.Config(i).APIAddr, nil); err != nil {
			return s, fmt.Errorf("member %d API: %w", i, err)
		}
		if s.raft, err = servedCert(t, c.Member(i).Store().RaftAddr(), &prober); err != nil {
			return s, fmt.Errorf("member %d Raft: %w", i, err)
		}
		s.gauge = c.Scrape(t, i).Value(gauge, "cert", certs.CertMember)
		return s, nil
	}
	before := make([]state, c.N())
	expiry := time.Time{}
	for i := range c.N() {
		if before[i], err = observe(i); err != nil {
			t.Fatal(err)
		}
		na := before[i].api.NotAfter
		if life := time.Until(na); life > validity || life < validity-30*time.Second {
			t.Fatalf("member %d: certificate expires in %s, want about %s", i, life, validity)
		}
		if before[i].gauge != float64(na.Unix()) {
			t.Errorf("member %d: %s = %v, want its NotAfter %d", i, gauge, before[i].gauge, na.Unix())
		}
		if na.After(expiry) {
			expiry = na
		}
	}

	// Serve until 10 s past the last original expiry: each round writes
	// through a follower and reads it on every member over new connections.
	round := 0
	for time.Now().Before(expiry.Add(10 * time.Second)) {
		round++
		f := c.Follower()
		name := "renew-" + strconv.Itoa(round)
		if _, err := c.PlainClientset(f).CoreV1().ConfigMaps("default").Create(ctx,
			configMap(name, map[string]string{"round": strconv.Itoa(round)}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("round %d (%s left to expiry): create on follower %d: %v", round, time.Until(expiry).Round(time.Second), f, err)
		}
		for i := range c.N() {
			c.CloseIdleConnections(i) // a new handshake: the client checks the served certificate now
			if _, err := c.PlainClientset(i).CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Fatalf("round %d (%s left to expiry): read on member %d: %v", round, time.Until(expiry).Round(time.Second), i, err)
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(5 * time.Second):
		}
	}

	for i := range c.N() {
		after, err := observe(i)
		if err != nil {
			t.Fatal(err)
		}
		if after.member != before[i].member {
			t.Errorf("member %d was restarted", i)
		}
		for what, got := range map[string]*x509.Certificate{"API": after.api, "Raft": after.raft} {
			if !got.NotAfter.After(before[i].api.NotAfter) || !time.Now().Before(got.NotAfter) {
				t.Errorf("member %d %s: NotAfter %s, want later than the original %s and in the future", i, what,
					got.NotAfter, before[i].api.NotAfter)
			}
			if _, err := got.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
				t.Errorf("member %d %s: %v", i, what, err)
			}
		}
		if after.gauge <= before[i].gauge || after.gauge < float64(after.api.NotAfter.Unix())-validity.Seconds() {
			t.Errorf("member %d: %s moved from %v to %v (served NotAfter %d)", i, gauge, before[i].gauge, after.gauge,
				after.api.NotAfter.Unix())
		}
		kept, err := os.ReadFile(filepath.Join(datadir.TLSDir(c.Config(i).DataDir), "member.crt"))
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(kept)
		if block == nil {
			t.Fatalf("member %d: tls/member.crt is not PEM", i)
		}
		keptCert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		// the one it serves, or a later one (renewed since the handshake)
		if !bytes.Equal(keptCert.Raw, after.api.Raw) && !keptCert.NotAfter.After(after.api.NotAfter) {
			t.Errorf("member %d: tls/member.crt (NotAfter %s) is not the certificate it serves (%s)", i,
				keptCert.NotAfter, after.api.NotAfter)
		}
	}

	// A member joining now opens new Raft and API connections with every
	// member, in both directions.
	cfg := member.DefaultConfig()
	cfg.ID, cfg.DataDir = "m3", filepath.Join(c.Dir(), "m3")
	cfg.APIAddr, cfg.Store.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Store.CommitTimeout, cfg.Store.SnapshotInterval = 5*time.Millisecond, time.Hour
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.JoinToken, cfg.Join, cfg.CertValidity = membertest.JoinToken, c.URL(c.WaitLeader()), validity
	j := c.Add(cfg)
	c.WaitMembers(4)
	if _, err := c.PlainClientset(j).CoreV1().ConfigMaps("default").Create(ctx,
		configMap("via-joiner", nil), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create through the joiner: %v", err)
	}
	if got := len(sameObjects(t, c, ctx)); got < round+1 {
		t.Errorf("%d objects on every member, want at least %d", got, round+1)
	}
}
